"""The Python agent's backend for dbsock's own servers (floor, echo),
whose protocol is a ping-pong of one message: the socket module's
blocking calls (no Python-level timeout, which would poll before each
call: the socket's own SO_RCVTIMEO and SO_SNDTIMEO bound a lookup).

It connects with the settings dbsock gives, sends a message of the key's size
and reads it back, closes, and names its library; agent.py does the
rest."""
import platform
import socket
import struct
import types

LIBRARIES = ("socket",)  # the first is the default
CHUNK = 32 << 10  # the most a lookup writes before it reads back


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


class Library:
    def __init__(self, name):
        self.name, self.version, self.tls, self.mode = name, platform.python_version(), False, {}

    def connect(self, o, ca_file):
        if o.get("tls_ca_pem"):
            raise ValueError("dbsock's own servers have no TLS")
        t = o["op_timeout_ms"] / 1000
        if o["network"] == "unix":
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.settimeout(t)
            s.connect(o["socket"])
        else:
            s = socket.create_connection((o["host"], o["port"]), timeout=t)
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        s.settimeout(None)
        tv = struct.pack("ll", int(t), int(t * 1e6) % 1000000)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, tv)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, tv)
        # The server's greeting, then the frame that names the token,
        # answered with "ok ID": before any lookup (none with no token:
        # the connect scenario's connections are unnamed).
        read_frame(s)
        info = {}
        if o["token"]:
            frame = ("hello " + o["token"]).encode()  # the server's own word
            s.sendall(b"\0" + bytes([len(frame)]) + frame)
            answer = read_frame(s)
            if not answer.startswith("ok "):
                s.close()
                raise ConnectionError("the server answered the token's frame with %r" % answer)
            info["conn_id"] = int(answer[3:])
        if o["network"] != "unix":
            host, port = s.getsockname()[:2]
            info["local_addr"] = ("[%s]:%d" if ":" in host else "%s:%d") % (host, port)
        out = bytearray(CHUNK)
        out[:4] = b"ping"
        return types.SimpleNamespace(conn=s, out=memoryview(out), into=memoryview(bytearray(CHUNK))), info

    def lookup(self, c, key):
        s, out, into, done = c.conn, c.out, c.into, 0
        while done < key:
            k = min(key - done, CHUNK)
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

    def close(self, c):
        c.conn.close()
