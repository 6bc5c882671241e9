#!/usr/bin/python3
"""dbsock's Python agent (docs/agents.md): agent.py TARGET [LIBRARY].

Opens connections with one Python client library, times each lookup of a
block on time.perf_counter_ns (a monotonic clock), checks each value's
length and returns each op's latency. Nothing else: dbsock seeds, verifies
each connection on the server side, and does the statistics.

Libraries (the first of each target is its default): redis: redis-py;
postgres and pgbouncer: psycopg2, psycopg; mysql: mysqldb, pymysql; memcached: pymemcache;
floor and echo (dbsock's own servers): socket.
"""
import json
import os
import platform
import struct
import sys
import tempfile
import time

clock = time.perf_counter_ns


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

    def open(self, o):
        kw = dict(username=o.get("user") or None, password=o.get("password") or None, client_name=o["token"],
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
        self.name = lib

    def open(self, o):
        kw = dict(user=o.get("user"), password=o.get("password"), dbname=o.get("database"), application_name=o["token"],
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
        self.name = lib

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
        cur.execute("SELECT GET_LOCK(%s, 0), CONNECTION_ID()", (o["token"],))  # the token the server shows
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

    def open(self, o):
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
        # answered with "ok ID": untimed, before any op.
        self.read_frame(s)
        hello = ("hello " + o["token"]).encode()
        s.sendall(b"\0" + bytes([len(hello)]) + hello)
        answer = self.read_frame(s)
        if not answer.startswith("ok "):
            s.close()
            raise ConnectionError("the server answered the hello with %r" % answer)
        info = {"conn_id": int(answer[3:])}
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


def library(target, lib):
    if target == "redis" and lib in ("", "redis-py"):
        return Redis()
    if target in ("postgres", "pgbouncer") and lib in ("", "psycopg2", "psycopg"):
        return Postgres(lib or "psycopg2")
    if target == "mysql" and lib in ("", "mysqldb", "pymysql"):
        return MySQL(lib or "mysqldb")
    if target == "memcached" and lib in ("", "pymemcache"):
        return Memcached()
    if target in ("floor", "echo") and lib in ("", "socket"):
        return PingPong()
    raise SystemExit("agent.py: no library %r for target %r (see the docstring)" % (lib, target))


def size(v):
    if isinstance(v, int):  # a ping-pong's count of bytes read back
        return v
    return -1 if v is None else len(v.encode() if isinstance(v, str) else v)


def block(lib, c, m):
    keys, want, ns, errors = m["keys"], m["value_length"], [], []
    for i in range(m["warmup"]):
        lib.op(c, keys[i % len(keys)])
    for i, key in enumerate(keys):
        err = None
        t0 = clock()
        try:
            v = lib.op(c, key)
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


def serve(lib, stdin, out):
    conns = {}
    for line in stdin:
        m = json.loads(line)
        try:
            if m["type"] == "open":
                try:
                    c, info = lib.open(m)
                finally:
                    remove_temp()  # the CA is read when connecting: none is left on disk, however the agent ends
                conns[m["id"]] = c
                reply = dict(type="opened", id=m["id"], **info)
            elif m["type"] == "block":
                reply = block(lib, conns[m["id"]], m)
            elif m["type"] == "overhead":
                reply = overhead(m["n"])
            elif m["type"] == "close":
                conns.pop(m["id"]).close()
                reply = {"type": "closed", "id": m["id"]}
            else:
                reply = {"type": "error", "message": "unknown message type %r" % m["type"]}
        except Exception as e:
            reply = {"type": "error", "id": m.get("id", ""), "message": "%s: %s" % (type(e).__name__, e)}
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


def main():
    if len(sys.argv) not in (2, 3):
        raise SystemExit("usage: agent.py TARGET [LIBRARY]")
    lib = library(sys.argv[1], sys.argv[2] if len(sys.argv) == 3 else "")
    out = sys.stdout
    out.write(json.dumps(dict(type="hello", protocol=1, language="python", runtime_version=platform.python_version(),
                              library=lib.name, library_version=lib.version,
                              **{"redis-py": dict(mode="resp2"), "psycopg2": dict(mode="prepared", unprepared_mode="interpolate"),
                                 "psycopg": dict(mode="prepared", unprepared_mode="exec"), "mysqldb": dict(mode="interpolate"),
                                 "pymysql": dict(mode="interpolate")}.get(lib.name, {}))) + "\n")
    out.flush()
    try:
        serve(lib, sys.stdin, out)
    finally:
        remove_temp()


if __name__ == "__main__":
    main()
