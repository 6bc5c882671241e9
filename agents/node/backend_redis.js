'use strict';
// The Node.js agent's backend for servers of Redis's protocol: node-redis.
// It connects with the settings dbsock gives, looks a key up, closes, and names its
// library (pkg: the package whose version the agent reports); agent.js does
// the rest.

const isUnix = (o) => o.network === 'unix';

module.exports = {
  libraries: ['node-redis'], // the first is the default
  library: (name) => ({
    name, pkg: 'redis', tls: true, mode: { mode: 'resp2' },
    async connect(o) {
      const { createClient } = require('redis');
      const socket = isUnix(o) ? { path: o.socket } : { host: o.host, port: o.port };
      socket.connectTimeout = o.op_timeout_ms;
      // No reconnecting: node-redis 4.5 (@redis/client 1.4) takes no false
      // here and would retry a refused connect for ever; a strategy that
      // returns an Error ends the retries, and connect fails with the
      // socket's own error.
      socket.reconnectStrategy = () => new Error('the agent does not reconnect');
      if (o.tls_ca_pem) Object.assign(socket, { tls: true, ca: o.tls_ca_pem, servername: o.tls_server_name || undefined });
      const c = createClient({ socket, username: o.user || undefined, password: o.password || undefined, name: o.token || undefined });
      c.on('error', () => {}); // each op's error is reported by the op
      await c.connect().catch((e) => { throw e.socketError || e; });
      return [c, {}];
    },
    lookup: (c, key) => c.get(String(key)),
    close: (c) => c.quit(),
  }),
};
