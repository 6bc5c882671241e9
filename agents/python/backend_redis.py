"""The Python agent's backend for servers of Redis's protocol: redis-py.

It connects with the settings dbsock gives, looks a key up, closes, and names
its library; agent.py does the rest."""

LIBRARIES = ("redis-py",)  # the first is the default


class Library:
    def __init__(self, name):
        import redis
        self.mod, self.name, self.version = redis, name, redis.__version__
        self.tls, self.mode = True, {"mode": "resp2"}

    def connect(self, o, ca_file):
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

    def lookup(self, c, key):
        return c.get(key)

    def close(self, c):
        c.close()
