"""The Python agent's backend for servers of MySQL's protocol (MariaDB,
MySQL): mysqldb (the default) or pymysql.

It connects with the settings dbsock gives, looks a key up, closes, and names
its library; agent.py does the rest."""
import types

LIBRARIES = ("mysqldb", "pymysql")  # the first is the default


class Library:
    def __init__(self, name):
        if name == "pymysql":
            import pymysql
            self.mod, self.version = pymysql, pymysql.__version__
        else:
            import MySQLdb
            self.mod, self.version = MySQLdb, ".".join(str(p) for p in MySQLdb.version_info[:3])
        self.name, self.tls, self.mode = name, True, {"mode": "interpolate"}

    def connect(self, o, ca_file):
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
        if o["token"]:  # the token the server shows (none: the connect scenario's connections are unnamed)
            cur.execute("SELECT GET_LOCK(%s, 0), CONNECTION_ID()", (o["token"],))
            _, conn_id = cur.fetchone()
        # Neither library prepares on the server: each lookup is the statement with its key written in.
        return types.SimpleNamespace(conn=c, cur=cur, stmt=o["statement"].replace("?", "%s")), {"conn_id": conn_id}

    def lookup(self, c, key):
        c.cur.execute(c.stmt, (key,))
        row = c.cur.fetchone()
        return None if row is None else row[0]

    def close(self, c):
        c.conn.close()
