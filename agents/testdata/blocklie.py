#!/usr/bin/python3
"""An agent whose blocks lie, for the tests: blocklie.py MODE TARGET.

It runs the Python agent for TARGET and passes every message through;
its connections are real and verified. What it says of its blocks:
  liar:     does no op and answers each block with plausible latencies
            (30 us each, after sleeping as long as they add up to);
  overlong: does the ops and multiplies every latency by 1000;
  floor:    does the ops and says each took 1000 ns;
  swap:     opens a second, unverified Unix connection beside each TCP
            one and sends the TCP connection's blocks over it;
  loadliar: does no op of a load and answers it with plausible latencies
            and lags, after sleeping out its schedule;
  loadlate: runs each load and says every op started 10 s after it was
            due (its lag), later than the request took;
  connectliar: answers the connect scenario's blocks and loads with
            lookups on the connection already open, opening none;
  v1:       says protocol 1 in its hello, with no capabilities."""
import json
import os
import subprocess
import sys
import time

mode, target = sys.argv[1], sys.argv[2]
agent = os.path.join(os.path.dirname(__file__), "..", "python", "agent.py")
p = subprocess.Popen(["/usr/bin/python3", agent, target], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
hello = json.loads(p.stdout.readline())
if mode == "v1":
    hello["protocol"] = 1
    hello.pop("capabilities", None)
print(json.dumps(hello), flush=True)
shadow = None  # the Unix connection's open, to copy for the swap


def ask(m):
    p.stdin.write(json.dumps(m) + "\n")
    p.stdin.flush()
    return json.loads(p.stdout.readline())


for line in sys.stdin:
    m = json.loads(line)
    if m["type"] == "block" and mode == "liar":
        ns = [30000] * len(m["keys"])
        time.sleep(sum(ns) / 1e9)
        print(json.dumps({"type": "block_result", "id": m["id"], "ns": ns}), flush=True)
        continue
    if m["type"] == "load" and mode == "loadliar":
        n = [len(k) for k in m["keys"]]
        sched = max(off + (k - 1) * m["interval_ns"] for off, k in zip(m.get("offsets_ns") or [0] * len(n), n))
        time.sleep(sched / 1e9 + 0.001)
        res = [{"id": i, "ns": [30000] * k, "lag_ns": [0] * k if m["interval_ns"] else []} for i, k in zip(m["ids"], n)]
        print(json.dumps({"type": "load_result", "results": res}), flush=True)
        continue
    if mode == "swap" and m["type"] == "open" and m["path"] == "unix":
        shadow = dict(m, id="shadow", token=m["token"] + "-shadow")
    if mode == "swap" and m["type"] == "block" and m["id"].startswith("tcp") and shadow:
        if shadow.get("opened") is None:
            shadow["opened"] = ask(shadow)
        r = ask(dict(m, id="shadow"))
        r["id"] = m["id"]
        print(json.dumps(r), flush=True)
        continue
    if mode == "connectliar" and m["type"] in ("block", "load"):
        m.pop("scenario", None)
    r = ask(m)
    if r.get("type") == "block_result" and mode == "overlong":
        r["ns"] = [v * 1000 for v in r["ns"]]
    if r.get("type") == "load_result" and mode == "loadlate":
        for c in r["results"]:
            c["lag_ns"] = [v + 10 ** 10 for v in c.get("lag_ns") or []]
    if r.get("type") == "block_result" and mode == "floor":
        r["ns"] = [1000 for v in r["ns"]]
    print(json.dumps(r), flush=True)
