#!/usr/bin/python3
"""dbsock's Python agent (docs/agents.md): agent.py [--workers MODEL] FAMILY [LIBRARY].

Opens connections with one Python client library, times each lookup of a
block or a load on time.perf_counter_ns (CLOCK_MONOTONIC), checks each
value's length and returns each op's latency (and, paced at a rate, its
lag behind its due time). Nothing else: dbsock seeds, verifies each
connection on the server side, and does the statistics.

Workers (agent protocol 2): each connection lives in a worker of its own
from its open to its close, which opens it, runs its blocks and its part
of each load. MODEL "processes" (the default) forks a process per
connection, as gunicorn's sync workers serve an application; "threads"
runs a thread per connection in the agent's process, under its GIL
(agent_workers.py).

It names no database and no client library: each protocol family's
backend, backend_FAMILY.py beside it, connects, looks a key up, closes
and names its library (its LIBRARIES, the first the default), and the
family dbsock starts the agent with chooses it.
"""
import importlib
import json
import os
import platform
import re
import sys
import tempfile
import time

import agent_workers  # beside this file: each connection's worker

clock = time.perf_counter_ns  # clock_gettime(CLOCK_MONOTONIC): one clock for every process of the machine


def ca_file(o):
    """Writes the run's CA to a private temporary file; its path."""
    fd, path = tempfile.mkstemp(prefix="dbsock-ca-", suffix=".pem")
    with os.fdopen(fd, "w") as f:
        f.write(o["tls_ca_pem"])
    TEMP.append(path)
    return path


def usage(why):
    """Exit 2 (a bad command line, as every stack's agent does) with why."""
    sys.stderr.write(why + "\n")
    sys.exit(2)


def backend(family, lib):
    """The backend of protocol family (backend_FAMILY.py, beside this
    file) with library lib, its default when lib is ""."""
    if not re.fullmatch(r"[a-z][a-z0-9_]{0,31}", family):
        usage("agent.py: %r is not a protocol family's name\n%s" % (family, USAGE))
    try:
        mod = importlib.import_module("backend_" + family)
    except ModuleNotFoundError as e:
        if e.name != "backend_" + family:
            raise
        usage("agent.py: no backend for protocol family %r (backend_%s.py beside agent.py)" % (family, family))
    if lib and lib not in mod.LIBRARIES:
        usage("agent.py: no library %r for protocol family %r (it has %s)" % (lib, family, ", ".join(mod.LIBRARIES)))
    b = mod.Library(lib or mod.LIBRARIES[0])
    b.family = family
    return b


def size(v):
    if isinstance(v, int):  # a count of bytes read back (a backend's answer to an echo)
        return v
    return -1 if v is None else len(v.encode() if isinstance(v, str) else v)


class Reconnecting:
    """The connect scenario's op: a connection of its own, opened with the
    open message o less its token (unnamed, as an application opens one),
    the lookup on it and its close, timed as one op (as dbsock's Go client
    times it)."""

    def __init__(self, lib, o):
        self.lib, self.o = lib, dict(o, token="")

    def op(self, _c, key):
        try:
            c, _ = self.lib.connect(self.o, ca_file)
        finally:
            remove_temp()  # a TLS open's CA file
        try:
            return self.lib.lookup(c, key)
        finally:
            self.lib.close(c)


def op_for(lib, scenario, o):
    """The op of a block or a load of scenario ("" or "connect") on the
    connection opened with the open message o."""
    if scenario == "connect":
        return Reconnecting(lib, o).op
    if scenario:
        raise ValueError("scenario %r: this agent times \"connect\" and lookups on open connections" % scenario)
    return lib.lookup


def block(lib, c, m, o):
    keys, want, ns, errors = m["keys"], m["value_length"], [], []
    op = op_for(lib, m.get("scenario") or "", o)
    for i in range(m["warmup"]):
        op(c, keys[i % len(keys)])
    for i, key in enumerate(keys):
        err = None
        t0 = clock()
        try:
            v = op(c, key)
        except Exception as e:  # the op's error, reported for that op
            v, err = None, "%s: %s" % (type(e).__name__, e)
        ns.append(clock() - t0)
        if err is None and size(v) != want:
            err = "value of %d bytes, want %d" % (size(v), want) if v is not None else "no value"
        if err:
            errors.append({"index": i, "message": err[:500]})
    return {"type": "block_result", "id": m["id"], "ns": ns, "errors": errors}


def overhead(n):
    def empty(c, key):
        return None
    ns = []
    for _ in range(n):
        t0 = clock()
        empty(None, None)
        ns.append(clock() - t0)
    return {"type": "overhead_result", "ns": ns}


MAX_CONNECTIONS = 256  # the most connections one load may have (the hello says it)
MAX_WORKERS = 1024  # the most connections open at once, each its worker
MAX_LOAD_OPS = 1000000  # the most ops one load may have in all (dbsock asks for 100,000 at most)
MAX_FAILS = 10  # failed ops in a row that end a connection's part of a load
def warm(lib, c, part, o):
    """A load's untimed ops on one connection, closed loop."""
    keys, op = part["keys"], op_for(lib, part["scenario"], o)
    for i in range(part["warmup"]):
        op(c, keys[i % len(keys)])


def run_load(lib, c, part, t0, o):
    """One connection's part of a load from T0 (on clock): closed loop, or
    each op started at its due time (or when the op before it ends, if
    later), waiting for it in time.sleep, which sleeps in
    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME). Nothing but the ops,
    their timing and keeping the numbers in preallocated lists."""
    keys, want, interval, n = part["keys"], part["value_length"], part["interval_ns"], part["n"]
    nkeys, end = len(keys), (t0 + part["duration_ns"] if part["duration_ns"] > 0 else None)
    ns, lags, errors = [0] * n, ([0] * n if interval > 0 else None), []
    op, sleep, fails, j = op_for(lib, part["scenario"], o), time.sleep, 0, 0
    agent_workers.prctl(agent_workers.PR_SET_TIMERSLACK, 1)  # this thread's sleeps end within a µs of their time, not the default 50 µs
    if interval > 0:
        due = t0 + part["offset_ns"]
        while j < n and (end is None or due < end):
            start = clock()
            while start < due:  # sleeps until the op is due: one sleep, another if it woke early
                sleep((due - start) / 1e9)
                start = clock()
            err = None
            try:
                v = op(c, keys[j % nkeys])
            except Exception as e:  # the op's error, reported for that op
                v, err = None, "%s: %s" % (type(e).__name__, e)
            ns[j] = clock() - start
            lags[j] = start - due
            if err is None and size(v) != want:
                err = "value of %d bytes, want %d" % (size(v), want) if v is not None else "no value"
            j += 1
            due += interval
            if err:
                errors.append({"index": j - 1, "message": err[:500]})
                fails += 1
                if fails >= MAX_FAILS:
                    break
            else:
                fails = 0
    else:
        start = clock()
        while start < t0:  # every connection starts at T0
            sleep((t0 - start) / 1e9)
            start = clock()
        while j < n:
            err = None
            start = clock()
            if end is not None and start >= end:
                break
            try:
                v = op(c, keys[j % nkeys])
            except Exception as e:
                v, err = None, "%s: %s" % (type(e).__name__, e)
            ns[j] = clock() - start
            if err is None and size(v) != want:
                err = "value of %d bytes, want %d" % (size(v), want) if v is not None else "no value"
            j += 1
            if err:
                errors.append({"index": j - 1, "message": err[:500]})
                fails += 1
                if fails >= MAX_FAILS:
                    break
            else:
                fails = 0
    r = {"id": part["id"], "ns": ns[:j] if j < n else ns, "errors": errors}
    if lags is not None:
        r["lag_ns"] = lags[:j] if j < n else lags
    return r


def work(lib, recv, send):
    """A worker: the one connection it opens, until its close (or the end
    of its channel). Requests: open, block, close as dbsock sends them; a
    load's part as warm (answered ready), then go with T0 (answered with its
    ops) or cancel (no answer)."""
    c = o = None  # the connection, and the open message it was opened with
    try:
        while True:
            m = recv()
            if m is None:
                return
            kind = m["type"]
            try:
                if kind == "open":
                    try:
                        c, info = lib.connect(m, ca_file)
                    finally:
                        remove_temp()  # the CA is read when connecting: none is left on disk, however the agent ends
                    o = m
                    send(dict(type="opened", id=m["id"], **info))
                elif kind == "block":
                    send(block(lib, c, m, o))
                elif kind == "warm":
                    warm(lib, c, m, o)
                    send({"type": "ready"})
                    go = recv()
                    if go is None:
                        return
                    if go["type"] == "go":
                        send({"type": "part", "result": run_load(lib, c, m, go["t0"], o)})
                elif kind == "close":
                    cc, c = c, None
                    lib.close(cc)
                    send({"type": "closed", "id": m["id"]})
                    return
                else:
                    send({"type": "error", "message": "the worker got an unknown request %r" % kind})
            except Exception as e:
                send({"type": "error", "id": m.get("id", ""), "message": "%s: %s" % (type(e).__name__, e)})
    finally:
        if c is not None:
            try:
                lib.close(c)
            except Exception:
                pass


class Agent:
    """The agent's process: answers dbsock's requests, each connection's in
    its worker."""

    def __init__(self, lib, model):
        self.lib, self.model, self.workers = lib, model, {}
        self.families = {lib.family: lib}  # an open's family: the library that speaks it

    def ask(self, w, m):
        """Sends a worker a request and returns its answer; a worker that
        ended is dropped, and its end is the error."""
        try:
            w.send(m)
            a = w.recv()
        except OSError:
            a = None
        if a is None:
            self.workers.pop(w.cid, None)
            raise ConnectionError("connection %s: %s" % (w.cid, w.gone()))
        return a

    def open(self, m):
        cid = m["id"]
        family = m.get("family")  # protocol 1: none, the library the agent was started with
        lib = self.lib if family is None else self.families.get(family)
        if lib is None:
            raise ValueError("this agent speaks %s with %s, not family %r: start one for that family's target"
                             % (self.lib.family, self.lib.name, family))
        if cid in self.workers:
            raise ValueError("connection %s is open already: close it first, or open another id" % cid)
        if len(self.workers) >= MAX_WORKERS:
            raise ValueError("%d connections are open, the most this agent keeps: close some first" % MAX_WORKERS)
        w = (agent_workers.ProcessWorker if self.model == "processes" else agent_workers.ThreadWorker)(work, lib, cid, self.workers)
        self.workers[cid] = w
        a = self.ask(w, m)
        if a["type"] != "opened":  # the worker has no connection: it goes
            self.workers.pop(cid, None)
            w.end(1.0)
        return a

    def worker(self, cid):
        w = self.workers.get(cid)
        if w is None:
            raise LookupError("no connection %s is open: open it first" % cid)
        return w

    def close(self, m):
        w = self.worker(m["id"])
        a = self.ask(w, m)
        self.workers.pop(m["id"], None)
        w.end(1.0)
        return a

    def parts(self, m):
        """Each connection's part of a load, checked before any starts."""
        ids, keys = m.get("ids") or [], m.get("keys") or []
        interval, duration, max_ops = m.get("interval_ns") or 0, m.get("duration_ns") or 0, m.get("max_ops") or 0
        offsets = m.get("offsets_ns") or [0] * len(ids)
        if not ids:
            raise ValueError("the load names no connection")
        if len(ids) > MAX_CONNECTIONS:
            raise ValueError("the load has %d connections, over the %d this agent runs at once (its hello's max_connections)"
                             % (len(ids), MAX_CONNECTIONS))
        if len(set(ids)) != len(ids):
            raise ValueError("the load names a connection twice")
        if len(keys) != len(ids) or len(offsets) != len(ids):
            raise ValueError("the load has %d ids, %d key lists and %d offsets: one each per connection"
                             % (len(ids), len(keys), len(offsets)))
        if interval < 0 or duration < 0 or max_ops < 0 or m.get("warmup", 0) < 0 or min(offsets) < 0:
            raise ValueError("the load's interval_ns, duration_ns, max_ops, warmup and offsets_ns must be >= 0")
        if duration > 0 and max_ops == 0 and interval == 0:
            raise ValueError("a closed-loop load with duration_ns needs max_ops > 0 (the ops each connection may do)")
        parts = []
        for cid, k, off in zip(ids, keys, offsets):
            self.worker(cid)
            if duration == 0:
                n = len(k)
            else:
                if not k:
                    raise ValueError("connection %s has no keys in the load" % cid)
                n = max_ops
                if interval > 0:
                    due = max(0, -(-(duration - off) // interval))  # due times before T0 + duration_ns
                    n = due if max_ops == 0 else min(max_ops, due)
            parts.append(dict(type="warm", id=cid, keys=k, warmup=m.get("warmup", 0) if k else 0,
                              value_length=m["value_length"], interval_ns=interval, offset_ns=off,
                              duration_ns=duration, n=n, scenario=m.get("scenario") or ""))
        if sum(p["n"] for p in parts) > MAX_LOAD_OPS:
            raise ValueError("the load has over %d ops: split it" % MAX_LOAD_OPS)
        return parts

    def load(self, m):
        parts = self.parts(m)
        ws = [self.workers[p["id"]] for p in parts]
        # Each worker warms its connection up, all at once, and says it is
        # ready; then all get T0, a few ms ahead on the one monotonic
        # clock, and sleep until it: none is woken in the timed window.
        sent, failed = [], None
        for w, p in zip(ws, parts):
            try:
                w.send(p)
                sent.append(w)
            except OSError:
                failed = failed or "connection %s: %s" % (w.cid, w.gone())
                self.workers.pop(w.cid, None)
        ready, failed = self.answers(sent, "ready", "'s warm-up", failed)
        if failed:
            for w, _ in ready:
                w.send({"type": "cancel"})
            raise RuntimeError("the load did not start: " + failed)
        t0 = clock() + 5000000 + 500000 * len(ws)  # time for every worker to be woken and asleep again before T0, on a busy machine too
        for w in ws:
            w.send({"type": "go", "t0": t0})
        parts, failed = self.answers(ws, "part", "", None)
        if failed:
            raise RuntimeError("the load failed: " + failed)
        return {"type": "load_result", "results": [a["result"] for _, a in parts]}

    def answers(self, ws, want, what, failed):
        """Reads one answer from each of ws: the (worker, answer) pairs of
        type want, and the first failure (failed, if already one)."""
        got = []
        for w in ws:
            try:
                a = w.recv()
            except OSError:
                a = None
            if a is None:
                failed = failed or "connection %s: %s" % (w.cid, w.gone())
                self.workers.pop(w.cid, None)
            elif a["type"] != want:
                failed = failed or "connection %s%s: %s" % (w.cid, what, a.get("message", a))
            else:
                got.append((w, a))
        return got, failed

    def end(self):
        """Ends every worker: each channel closed, then each waited for
        (killed after a second)."""
        ws, self.workers = list(self.workers.values()), {}
        deadline = time.monotonic() + 1.0
        for w in ws:
            if isinstance(w, agent_workers.ProcessWorker):
                w.sock.close()
            else:
                w.requests.put(None)
        for w in ws:
            w.end(max(0.0, deadline - time.monotonic()))

    def serve(self, stdin, out):
        for line in stdin:
            m = {}
            try:
                m = json.loads(line)
                if not isinstance(m, dict):
                    m = {}
                    raise ValueError("a request is a JSON object, not %r" % line.strip()[:40])
                kind = m["type"]
                if kind == "open":
                    reply = self.open(m)
                elif kind == "block":
                    reply = self.ask(self.worker(m["id"]), m)
                elif kind == "load":
                    reply = self.load(m)
                elif kind == "overhead":
                    reply = overhead(m["n"])
                elif kind == "close":
                    reply = self.close(m)
                else:
                    reply = {"type": "error", "message": "unknown message type %r" % kind}
            except Exception as e:
                ids = m.get("ids") or [""]
                cid = m.get("id", ids[0] if isinstance(ids, list) and ids else "")
                reply = {"type": "error", "id": cid, "message": "%s: %s" % (type(e).__name__, e)}
            out.write(json.dumps(reply) + "\n")
            out.flush()


TEMP = []


def remove_temp():
    """Removes the temporary files ca_file wrote."""
    while TEMP:
        p = TEMP.pop()
        try:
            os.unlink(p)
        except FileNotFoundError:
            pass


USAGE = "usage: agent.py [--workers processes|threads] FAMILY [LIBRARY]"


def main():
    args, model = sys.argv[1:], "processes"
    if args and args[0].startswith("--workers"):
        if args[0] == "--workers" and len(args) > 1:
            model, args = args[1], args[2:]
        elif args[0].startswith("--workers="):
            model, args = args[0].split("=", 1)[1], args[1:]
        else:
            usage(USAGE)
        if model not in ("processes", "threads"):
            usage("agent.py: --workers %r: the models are processes and threads\n%s" % (model, USAGE))
    if len(args) not in (1, 2):
        usage(USAGE)
    lib = backend(args[0], args[1] if len(args) == 2 else "")
    out = sys.stdout
    caps = dict(families=[lib.family], tls=lib.tls, workers=model, open_loop=True, max_connections=MAX_CONNECTIONS, connect=True)
    out.write(json.dumps(dict(type="hello", protocol=2, language="python", runtime_version=platform.python_version(),
                              library=lib.name, library_version=lib.version, capabilities=caps, **lib.mode)) + "\n")
    out.flush()
    agent = Agent(lib, model)
    try:
        agent.serve(sys.stdin, out)
    finally:
        agent.end()
        remove_temp()


if __name__ == "__main__":
    main()
