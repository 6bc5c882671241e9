#!/usr/bin/python3
"""A misbehaving agent for dbsock run's tests: unruly.py MODE TARGET.

It runs the Python agent for TARGET and passes every message through,
so that its connections are real and verified, but misbehaves as MODE
says: at its first block (hang: never answers; exit: writes half an
answer and exits; count: drops one latency), or at its opens (lie: sends
every connection to the Unix socket of an earlier open and answers as if
it had dialed what it was asked)."""
import json
import os
import subprocess
import sys
import time

mode, target = sys.argv[1], sys.argv[2]
agent = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python", "agent.py")
# dbsock gives a cmd: agent the target, the Python agent takes its protocol family
family = {"pgbouncer": "postgres", "floor": "pingpong", "echo": "pingpong"}.get(target, target)
p = subprocess.Popen(["/usr/bin/python3", agent, family], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
print(p.stdout.readline(), end="", flush=True)  # its hello
socket = None
for line in sys.stdin:
    m = json.loads(line)
    if m["type"] == "block" and mode == "hang":
        time.sleep(600)
    if m["type"] == "block" and mode == "exit":
        print('{"type":"block_result","id":"', end="", flush=True)
        print("dying mid-block", file=sys.stderr, flush=True)
        sys.exit(3)
    if m["type"] == "open" and m["network"] == "unix":
        socket = m["socket"]
    elif m["type"] == "open" and mode == "lie" and socket:
        m.update(network="unix", socket=socket)
    p.stdin.write(json.dumps(m) + "\n")
    p.stdin.flush()
    answer = p.stdout.readline()
    if m["type"] == "block" and mode == "count":
        r = json.loads(answer)
        r["ns"] = r["ns"][:-1]
        answer = json.dumps(r) + "\n"
    print(answer, end="", flush=True)
