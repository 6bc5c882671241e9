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
  v1:       says protocol 1 in its hello, with no capabilities;
  divide:   does the ops and divides the Unix connections' latencies by 5;
  pad:      does the ops and adds 100 us to each TCP op, sleeping it out
            after the block (real time, inside the request);
  fresh:    does each TCP block's ops but the last on connections of
            their own (the connect scenario), the last on the verified one;
  replay:   answers each TCP block with the last Unix block's latencies;
  connectdivide: the connect scenario's Unix latencies divided by 5;
  lag0:     runs each load and says every op started when it was due;
  drop:     runs each load and drops the slowest 3% of its Unix ops."""
import json
import os
import subprocess
import sys
import time

mode, target = sys.argv[1], sys.argv[2]
agent = os.path.join(os.path.dirname(__file__), "..", "python", "agent.py")
# dbsock gives a cmd: agent the target, the Python agent takes its protocol family
family = {"pgbouncer": "postgres", "floor": "pingpong", "echo": "pingpong"}.get(target, target)
p = subprocess.Popen(["/usr/bin/python3", agent, family], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
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
    if mode == "fresh" and m["type"] == "block" and m["id"].startswith("tcp") and len(m["keys"]) > 1:
        a = ask(dict(m, keys=m["keys"][:-1], warmup=0, scenario="connect"))
        b = ask(dict(m, keys=m["keys"][-1:], warmup=0))
        a["ns"] += b["ns"]
        print(json.dumps(a), flush=True)
        continue
    r = ask(m)
    unix = str(r.get("id", "")).startswith("unix")
    if r.get("type") == "block_result" and mode == "divide" and unix:
        r["ns"] = [v // 5 for v in r["ns"]]
    if r.get("type") == "block_result" and mode == "connectdivide" and unix and m.get("scenario") == "connect":
        r["ns"] = [v // 5 for v in r["ns"]]
    if r.get("type") == "load_result" and mode == "connectdivide" and m.get("scenario") == "connect":
        for c in r["results"]:
            if c["id"].startswith("unix"):
                c["ns"] = [v // 5 for v in c["ns"]]
    if r.get("type") == "block_result" and mode == "pad" and r["id"].startswith("tcp"):
        r["ns"] = [v + 100000 for v in r["ns"]]
        time.sleep(len(r["ns"]) * 100e-6)
    if r.get("type") == "block_result" and mode == "replay":
        if unix:
            last_unix = r["ns"]
        elif "last_unix" in globals() and len(r["ns"]) > 1:
            r["ns"] = [last_unix[i % len(last_unix)] for i in range(len(r["ns"]))]
    if r.get("type") == "load_result" and mode == "lag0":
        for c in r["results"]:
            c["lag_ns"] = [0 for v in c.get("lag_ns") or []]
    if r.get("type") == "load_result" and mode == "drop" and m.get("duration_ns"):
        for c in r["results"]:
            if not c["id"].startswith("unix") or not c["ns"]:
                continue
            cut = sorted(c["ns"])[int(len(c["ns"]) * 0.97)]
            keep = [i for i, v in enumerate(c["ns"]) if v < cut]
            c["ns"] = [c["ns"][i] for i in keep]
            if c.get("lag_ns"):
                c["lag_ns"] = [c["lag_ns"][i] for i in keep]
            c["errors"] = []
    if r.get("type") == "block_result" and mode == "overlong":
        r["ns"] = [v * 1000 for v in r["ns"]]
    if r.get("type") == "load_result" and mode == "loadlate":
        for c in r["results"]:
            c["lag_ns"] = [v + 10 ** 10 for v in c.get("lag_ns") or []]
    if r.get("type") == "block_result" and mode == "floor":
        r["ns"] = [1000 for v in r["ns"]]
    print(json.dumps(r), flush=True)
