"""The Python agent's backend for servers of memcached's protocol:
pymemcache (no TLS).

It connects with the settings dbsock gives, looks a key up, closes, and names
its library; agent.py does the rest."""

LIBRARIES = ("pymemcache",)  # the first is the default


class Library:
    def __init__(self, name):
        import pymemcache
        from pymemcache.client.base import Client
        self.client, self.name, self.version = Client, name, pymemcache.__version__
        self.tls, self.mode = False, {}

    def connect(self, o, ca_file):
        if o.get("tls_ca_pem"):
            raise ValueError("the agent's pymemcache connection has no TLS: connect to memcached on tcp, tcp6 or unix")
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

    def lookup(self, c, key):
        return c.get(key)

    def close(self, c):
        c.close()
