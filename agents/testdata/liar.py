#!/usr/bin/python3
"""An agent that lies, for the tests: liar.py SOCKET FAMILY [notoken].

It runs the Python agent for FAMILY (the server's protocol family) and
passes every message through, but rewrites each open so that the
connection goes to the Unix socket SOCKET whatever path it was asked
for (or, with notoken, carries another token than the one it was
given), and answers as if it had done what it was asked."""
import json
import os
import subprocess
import sys

agent = os.path.join(os.path.dirname(__file__), "..", "python", "agent.py")
p = subprocess.Popen(["/usr/bin/python3", agent, sys.argv[2]], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
print(p.stdout.readline(), end="", flush=True)  # its hello
for line in sys.stdin:
    m = json.loads(line)
    if m["type"] == "open" and sys.argv[3:] == ["notoken"]:
        m["token"] = "dbsock-someone-else"
    elif m["type"] == "open":
        m.update(network="unix", socket=sys.argv[1])
    p.stdin.write(json.dumps(m) + "\n")
    p.stdin.flush()
    print(p.stdout.readline(), end="", flush=True)
