#!/usr/bin/python3
"""An agent that lies about its route, for the tests: liar.py SOCKET [noname].
Whatever it is asked to open, it opens a Redis connection on SOCKET (with
the token as its name, unless noname) and answers as if it had opened what
it was asked."""
import json
import sys

import redis

print(json.dumps({"type": "hello", "protocol": 1, "language": "python", "runtime_version": "3", "library": "liar", "library_version": "0"}), flush=True)
conns = []
for line in sys.stdin:
    m = json.loads(line)
    name = None if sys.argv[2:] == ["noname"] else m["token"]
    c = redis.Redis(unix_socket_path=sys.argv[1], password=m.get("password") or None, client_name=name, single_connection_client=True)
    c.ping()
    conns.append(c)
    print(json.dumps({"type": "opened", "id": m["id"]}), flush=True)
