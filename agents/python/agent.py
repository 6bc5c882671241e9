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
runs a thread per connection in the agent's process, under its GIL.

Libraries, by the server's protocol family (the first of each is its
default): redis: redis-py; postgres: psycopg2, psycopg; mysql: mysqldb,
pymysql; memcached: pymemcache; pingpong (dbsock's own servers): socket.
"""
import ctypes
import json
import os
import pickle
import platform
import queue
import signal
import socket
import struct
import sys
import tempfile
import threading
import time

clock = time.perf_counter_ns  # clock_gettime(CLOCK_MONOTONIC): one clock for every process of the machine


def ca_file(o):
    """Writes the run's CA to a private temporary file; its path."""
    fd, path = tempfile.mkstemp(prefix="dbsock-ca-", suffix=".pem")
    with os.fdopen(fd, "w") as f:
        f.write(o["tls_ca_pem"])
    TEMP.append(path)
    return path


class Held:
    """A connection and what its ops use (a cursor, the statement)."""

    def __init__(self, conn, cur=None, stmt=None):
        self.conn, self.cur, self.stmt = conn, cur, stmt

    def close(self):
        self.conn.close()


class Redis:
    def __init__(self):
        import redis
        self.mod, self.name, self.version = redis, "redis-py", redis.__version__
        self.family, self.tls = "redis", True

    def open(self, o):
        kw = dict(username=o.get("user") or None, password=o.get("password") or None, client_name=o["token"] or None,
                  socket_timeout=o["op_timeout_ms"] / 1000, single_connection_client=True)
        if o["network"] == "unix":
            kw["unix_socket_path"] = o["socket"]
        else:
            kw.update(host=o["host"], port=o["port"])
        if o.get("tls_ca_pem"):
            kw.update(ssl=True, ssl_ca_certs=ca_file(o), ssl_check_hostname=bool(o.get("tls_server_name")))
        c = self.mod.Redis(**kw)
        c.ping()
        return c, {}

    def op(self, c, key):
        return c.get(key)


class Postgres:
    def __init__(self, lib):
        if lib == "psycopg":
            import psycopg
            self.psycopg3, self.mod, self.version = True, psycopg, psycopg.__version__
        else:
            import psycopg2
            self.psycopg3, self.mod, self.version = False, psycopg2, psycopg2.__version__.split()[0]
        self.name, self.family, self.tls = lib, "postgres", True

    def open(self, o):
        kw = dict(user=o.get("user"), password=o.get("password"), dbname=o.get("database"), application_name=o["token"] or None,
                  connect_timeout=max(1, o["op_timeout_ms"] // 1000))
        if o["network"] == "unix":  # libpq takes the socket's directory and the port its name ends with
            kw.update(host=os.path.dirname(o["socket"]), port=o["socket"].rsplit(".", 1)[1], sslmode="disable")
        else:
            kw.update(host=o["host"], port=o["port"], sslmode="disable")
        if o.get("tls_ca_pem"):
            kw.update(sslmode="verify-ca", sslrootcert=ca_file(o))
        stmt = o["statement"].replace("$1", "%s")
        self.prepare = not o.get("no_prepare")  # a pooler in transaction pooling cannot keep a prepared statement
        if self.psycopg3:
            c = self.mod.connect(autocommit=True, **kw)
            return Held(c, c.cursor(), stmt), {"conn_id": c.info.backend_pid}
        c = self.mod.connect(**kw)
        c.autocommit = True
        cur = c.cursor()
        if not self.prepare:
            return Held(c, cur, stmt), {"conn_id": c.get_backend_pid()}
        cur.execute("PREPARE dbsock_lookup AS " + o["statement"])  # once per connection
        return Held(c, cur, "EXECUTE dbsock_lookup (%s)"), {"conn_id": c.get_backend_pid()}

    def op(self, c, key):
        cur, stmt = c.cur, c.stmt
        if self.psycopg3:
            cur.execute(stmt, (key,), prepare=self.prepare)  # prepared by the server from its first use
        else:
            cur.execute(stmt, (key,))
        row = cur.fetchone()
        return None if row is None else row[0]


class MySQL:
    def __init__(self, lib):
        if lib == "pymysql":
            import pymysql
            self.mod, self.version = pymysql, pymysql.__version__
        else:
            import MySQLdb
            self.mod, self.version = MySQLdb, ".".join(str(p) for p in MySQLdb.version_info[:3])
        self.name, self.family, self.tls = lib, "mysql", True

    def open(self, o):
        pw = "password" if self.name == "pymysql" else "passwd"
        kw = {"user": o.get("user"), pw: o.get("password") or "", "database" if self.name == "pymysql" else "db": o.get("database"),
              "connect_timeout": max(1, o["op_timeout_ms"] // 1000), "autocommit": True}
        if o["network"] == "unix":
            kw.update(unix_socket=o["socket"], host="localhost")
        else:
            kw.update(host=o["host"], port=o["port"])
        if o.get("tls_ca_pem"):
            kw["ssl"] = {"ca": ca_file(o)}
        c = self.mod.connect(**kw)
        cur = c.cursor()
        conn_id = None
        if o["token"]:  # the token the server shows (none: a connect scenario's op opens unnamed)
            cur.execute("SELECT GET_LOCK(%s, 0), CONNECTION_ID()", (o["token"],))
            _, conn_id = cur.fetchone()
        # Neither library prepares on the server: each op is the statement with its key written in.
        return Held(c, cur, o["statement"].replace("?", "%s")), {"conn_id": conn_id}

    def op(self, c, key):
        cur, stmt = c.cur, c.stmt
        cur.execute(stmt, (key,))
        row = cur.fetchone()
        return None if row is None else row[0]


class Memcached:
    def __init__(self):
        import pymemcache
        from pymemcache.client.base import Client
        self.client, self.name, self.version = Client, "pymemcache", pymemcache.__version__
        self.family, self.tls = "memcached", False

    def open(self, o):
        if o.get("tls_ca_pem"):
            raise ValueError("the agent's pymemcache connection has no TLS: open memcached on tcp, tcp6 or unix")
        server = o["socket"] if o["network"] == "unix" else (o["host"], o["port"])
        t = o["op_timeout_ms"] / 1000
        c = self.client(server, connect_timeout=t, timeout=t)
        if o.get("password"):  # memcached's text-protocol authentication (-Y): a set of "user password"
            c.set("auth", (o.get("user", "") + " " + o["password"]).encode(), noreply=False)
        c.version()
        info = {}
        if o["network"] != "unix":
            host, port = c.sock.getsockname()[:2]
            info["local_addr"] = ("[%s]:%d" if ":" in host else "%s:%d") % (host, port)
        return c, info

    def op(self, c, key):
        return c.get(key)


class PingPong:
    """dbsock's own servers (floor, echo): the ping-pong of one message
    through the socket module's blocking calls (no Python-level timeout,
    which would poll before each call: the socket's own SO_RCVTIMEO and
    SO_SNDTIMEO bound an op)."""

    CHUNK = 32 << 10  # the most an op writes before it reads back

    def __init__(self):
        import socket
        self.socket, self.name, self.version = socket, "socket", platform.python_version()
        self.family, self.tls = "pingpong", False

    @staticmethod
    def read_frame(s):
        """One of the server's frames: a length byte and text."""
        n = s.recv(1)
        text = b""
        while n and len(text) < n[0]:
            more = s.recv(n[0] - len(text))
            if not more:
                break
            text += more
        if not n or len(text) < n[0]:
            raise ConnectionError("the server closed the connection")
        return text.decode()

    def open(self, o):
        sk = self.socket
        if o.get("tls_ca_pem"):
            raise ValueError("dbsock's own servers have no TLS")
        t = o["op_timeout_ms"] / 1000
        if o["network"] == "unix":
            s = sk.socket(sk.AF_UNIX, sk.SOCK_STREAM)
            s.settimeout(t)
            s.connect(o["socket"])
        else:
            s = sk.create_connection((o["host"], o["port"]), timeout=t)
            s.setsockopt(sk.IPPROTO_TCP, sk.TCP_NODELAY, 1)
        s.settimeout(None)
        tv = struct.pack("ll", int(t), int(t * 1e6) % 1000000)
        s.setsockopt(sk.SOL_SOCKET, sk.SO_RCVTIMEO, tv)
        s.setsockopt(sk.SOL_SOCKET, sk.SO_SNDTIMEO, tv)
        # The server's greeting, then the hello that names the token,
        # answered with "ok ID": untimed, before any op (no hello with no
        # token: a connect scenario's op opens unnamed).
        self.read_frame(s)
        info = {}
        if o["token"]:
            hello = ("hello " + o["token"]).encode()
            s.sendall(b"\0" + bytes([len(hello)]) + hello)
            answer = self.read_frame(s)
            if not answer.startswith("ok "):
                s.close()
                raise ConnectionError("the server answered the hello with %r" % answer)
            info["conn_id"] = int(answer[3:])
        if o["network"] != "unix":
            host, port = s.getsockname()[:2]
            info["local_addr"] = ("[%s]:%d" if ":" in host else "%s:%d") % (host, port)
        c = Held(s)
        out = bytearray(self.CHUNK)
        out[:4] = b"ping"
        c.out, c.into = memoryview(out), memoryview(bytearray(self.CHUNK))
        return c, info

    def op(self, c, key):
        s, out, into, done = c.conn, c.out, c.into, 0
        while done < key:
            k = min(key - done, self.CHUNK)
            s.sendall(out[:k])
            got = 0
            while got < k:
                r = s.recv_into(into[got:k])
                if r == 0:
                    raise ConnectionError("the server closed the connection after %d of %d bytes" % (done + got, key))
                got += r
            done += k
        if key > 0 and into[0] != 0x70:  # "p"
            raise ValueError("the server echoed other bytes than it was sent")
        return key  # the bytes read back


def library(family, lib):
    if family == "redis" and lib in ("", "redis-py"):
        return Redis()
    if family == "postgres" and lib in ("", "psycopg2", "psycopg"):
        return Postgres(lib or "psycopg2")
    if family == "mysql" and lib in ("", "mysqldb", "pymysql"):
        return MySQL(lib or "mysqldb")
    if family == "memcached" and lib in ("", "pymemcache"):
        return Memcached()
    if family == "pingpong" and lib in ("", "socket"):
        return PingPong()
    raise SystemExit("agent.py: no library %r for protocol family %r (see the docstring)" % (lib, family))


def size(v):
    if isinstance(v, int):  # a ping-pong's count of bytes read back
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
            c, _ = self.lib.open(self.o)
        finally:
            remove_temp()  # a TLS open's CA file
        try:
            return self.lib.op(c, key)
        finally:
            c.close()


def op_for(lib, scenario, o):
    """The op of a block or a load of scenario ("" or "connect") on the
    connection opened with the open message o."""
    if scenario == "connect":
        return Reconnecting(lib, o).op
    if scenario:
        raise ValueError("scenario %r: this agent times \"connect\" and lookups on open connections" % scenario)
    return lib.op


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
LIBC = None  # libc through ctypes, for prctl (Linux); None elsewhere


def prctl(option, arg):
    """prctl(2) on Linux; nothing elsewhere."""
    if LIBC is not None:
        LIBC.prctl(option, arg, 0, 0, 0)


PR_SET_PDEATHSIG, PR_SET_TIMERSLACK = 1, 29


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
    prctl(PR_SET_TIMERSLACK, 1)  # this thread's sleeps end within a µs of their time, not the default 50 µs
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
                        c, info = lib.open(m)
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
                    cc.close()
                    send({"type": "closed", "id": m["id"]})
                    return
                else:
                    send({"type": "error", "message": "the worker got an unknown request %r" % kind})
            except Exception as e:
                send({"type": "error", "id": m.get("id", ""), "message": "%s: %s" % (type(e).__name__, e)})
    finally:
        if c is not None:
            try:
                c.close()
            except Exception:
                pass


class ThreadWorker:
    """A connection's worker as a thread of the agent's process."""

    def __init__(self, lib, cid, workers):
        self.cid, self.requests, self.answers = cid, queue.Queue(), queue.Queue()
        self.thread = threading.Thread(target=work, args=(lib, self.requests.get, self.answers.put),
                                       name="dbsock-" + cid[:40], daemon=True)
        self.thread.start()

    def send(self, m):
        self.requests.put(m)

    def recv(self):
        return self.answers.get()

    def end(self, wait):
        self.requests.put(None)
        self.thread.join(wait)

    def gone(self):
        return "its worker thread ended"


class ProcessWorker:
    """A connection's worker as a process forked from the agent's, talking
    with it over a socket pair: each message a length (8 bytes) and a
    pickle. The worker dies with the agent: the kernel sends it SIGKILL
    when the agent's process ends (PR_SET_PDEATHSIG), and it exits at the
    end of its channel, which no other process holds open."""

    MAX_MESSAGE = 1 << 30

    def __init__(self, lib, cid, workers):
        self.cid, self.status = cid, None
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        parent = os.getpid()
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # the worker
            code = 0
            try:
                prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
                if os.getppid() != parent:  # the agent ended before the worker could ask to end with it
                    os._exit(1)
                mine.close()
                for w in workers.values():  # the other workers' channels stay only with the agent
                    w.sock.close()
                null = os.open(os.devnull, os.O_RDONLY)
                os.dup2(null, 0)  # only the agent reads dbsock's requests and writes its answers
                os.dup2(2, 1)
                os.close(null)
                self.sock = theirs
                work(lib, self.recv, self.send)
            except BaseException:
                code = 1
                try:
                    import traceback
                    traceback.print_exc()
                    sys.stderr.flush()
                except BaseException:
                    pass
            finally:
                os._exit(code)
        theirs.close()
        self.pid, self.sock = pid, mine

    def send(self, m):
        b = pickle.dumps(m, pickle.HIGHEST_PROTOCOL)
        self.sock.sendall(struct.pack("<Q", len(b)) + b)

    def read(self, n):
        buf, got = bytearray(n), 0
        view = memoryview(buf)
        while got < n:
            r = self.sock.recv_into(view[got:])
            if r == 0:
                return None
            got += r
        return buf

    def recv(self):
        """The next message, or None at the channel's end (the other side
        ended)."""
        head = self.read(8)
        if head is None:
            return None
        n = struct.unpack("<Q", head)[0]
        if n > self.MAX_MESSAGE:
            raise ValueError("a message of %d bytes on a worker's channel, over %d" % (n, self.MAX_MESSAGE))
        body = self.read(n)
        return None if body is None else pickle.loads(body)

    def reap(self, wait):
        """Waits up to wait seconds for the worker to exit, then kills it."""
        if self.status is not None:
            return
        deadline = time.monotonic() + wait
        while True:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.status = status
                return
            if time.monotonic() >= deadline:
                break
            time.sleep(0.002)
        os.kill(self.pid, signal.SIGKILL)
        self.status = os.waitpid(self.pid, 0)[1]

    def end(self, wait):
        self.sock.close()
        self.reap(wait)

    def gone(self):
        self.end(0.5)
        if os.WIFSIGNALED(self.status):
            how = "was killed by signal %d" % os.WTERMSIG(self.status)
        else:
            how = "exited with status %d" % os.WEXITSTATUS(self.status)
        return "its worker process %d %s (its stderr is the agent's)" % (self.pid, how)


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
        w = (ProcessWorker if self.model == "processes" else ThreadWorker)(lib, cid, self.workers)
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
            if isinstance(w, ProcessWorker):
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
    global LIBC
    args, model = sys.argv[1:], "processes"
    if args and args[0].startswith("--workers"):
        if args[0] == "--workers" and len(args) > 1:
            model, args = args[1], args[2:]
        elif args[0].startswith("--workers="):
            model, args = args[0].split("=", 1)[1], args[1:]
        else:
            raise SystemExit(USAGE)
        if model not in ("processes", "threads"):
            raise SystemExit("agent.py: --workers %r: the models are processes and threads\n%s" % (model, USAGE))
    if len(args) not in (1, 2):
        raise SystemExit(USAGE)
    lib = library(args[0], args[1] if len(args) == 2 else "")
    if sys.platform.startswith("linux"):
        LIBC = ctypes.CDLL(None, use_errno=True)
    out = sys.stdout
    caps = dict(families=[lib.family], tls=lib.tls, workers=model, open_loop=True, max_connections=MAX_CONNECTIONS, connect=True)
    out.write(json.dumps(dict(type="hello", protocol=2, language="python", runtime_version=platform.python_version(),
                              library=lib.name, library_version=lib.version, capabilities=caps,
                              **{"redis-py": dict(mode="resp2"), "psycopg2": dict(mode="prepared", unprepared_mode="interpolate"),
                                 "psycopg": dict(mode="prepared", unprepared_mode="exec"), "mysqldb": dict(mode="interpolate"),
                                 "pymysql": dict(mode="interpolate")}.get(lib.name, {}))) + "\n")
    out.flush()
    agent = Agent(lib, model)
    try:
        agent.serve(sys.stdin, out)
    finally:
        agent.end()
        remove_temp()


if __name__ == "__main__":
    main()
