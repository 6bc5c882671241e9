"""The Python agent's backend for servers of PostgreSQL's protocol:
psycopg2 (the default) or psycopg (3).

It connects with the settings dbsock gives, prepares the statement once where
it may, looks a key up, closes, and names its library; agent.py does the
rest."""
import os
import types

LIBRARIES = ("psycopg2", "psycopg")  # the first is the default


class Library:
    def __init__(self, name):
        if name == "psycopg":
            import psycopg
            self.psycopg3, self.mod, self.version = True, psycopg, psycopg.__version__
            self.mode = {"mode": "prepared", "unprepared_mode": "exec"}
        else:
            import psycopg2
            self.psycopg3, self.mod, self.version = False, psycopg2, psycopg2.__version__.split()[0]
            self.mode = {"mode": "prepared", "unprepared_mode": "interpolate"}
        self.name, self.tls = name, True

    def connect(self, o, ca_file):
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
            return types.SimpleNamespace(conn=c, cur=c.cursor(), stmt=stmt), {"conn_id": c.info.backend_pid}
        c = self.mod.connect(**kw)
        c.autocommit = True
        cur = c.cursor()
        if not self.prepare:
            return types.SimpleNamespace(conn=c, cur=cur, stmt=stmt), {"conn_id": c.get_backend_pid()}
        cur.execute("PREPARE dbsock_lookup AS " + o["statement"])  # once per connection
        return types.SimpleNamespace(conn=c, cur=cur, stmt="EXECUTE dbsock_lookup (%s)"), {"conn_id": c.get_backend_pid()}

    def lookup(self, c, key):
        cur, stmt = c.cur, c.stmt
        if self.psycopg3:
            cur.execute(stmt, (key,), prepare=self.prepare)  # prepared by the server from its first use
        else:
            cur.execute(stmt, (key,))
        row = cur.fetchone()
        return None if row is None else row[0]

    def close(self, c):
        c.conn.close()
