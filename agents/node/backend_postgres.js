'use strict';
// The Node.js agent's backend for servers of PostgreSQL's protocol: node-pg.
// It connects with the settings dbsock gives, looks a key up, closes, and names its
// library (pkg: the package whose version the agent reports); agent.js does
// the rest.

const path = require('path');

const isUnix = (o) => o.network === 'unix';

module.exports = {
  libraries: ['node-pg'], // the first is the default
  library: (name) => ({
    name, pkg: 'pg', tls: true, mode: { mode: 'prepared', unprepared_mode: 'exec' },
    async connect(o) {
      const { Client } = require('pg');
      const cfg = { user: o.user, password: o.password, database: o.database, application_name: o.token || undefined,
        connectionTimeoutMillis: o.op_timeout_ms, ssl: o.tls_ca_pem ? { ca: o.tls_ca_pem, servername: o.tls_server_name || undefined } : false };
      if (isUnix(o)) { // the socket's directory and the port its name ends with
        Object.assign(cfg, { host: path.dirname(o.socket), port: Number(o.socket.split('.').pop()) });
      } else {
        Object.assign(cfg, { host: o.host, port: o.port });
      }
      const c = new Client(cfg);
      await c.connect();
      // A named query: node-pg prepares it once per connection (not through
      // a pooler in transaction pooling, which cannot keep it).
      c.dbsockQuery = { name: o.no_prepare ? undefined : 'dbsock_lookup', text: o.statement, rowMode: 'array' };
      return [c, { conn_id: c.processID }];
    },
    async lookup(c, key) {
      const r = await c.query({ ...c.dbsockQuery, values: [key] });
      return r.rows.length ? r.rows[0][0] : null;
    },
    close: (c) => c.end(),
  }),
};
