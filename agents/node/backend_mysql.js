'use strict';
// The Node.js agent's backend for servers of MySQL's protocol (MariaDB, MySQL): node-mysql.
// It connects with the settings dbsock gives, looks a key up, closes, and names its
// library (pkg: the package whose version the agent reports); agent.js does
// the rest.

const isUnix = (o) => o.network === 'unix';

module.exports = {
  libraries: ['node-mysql'], // the first is the default
  library: (name) => ({
    name, pkg: 'mysql', tls: true, mode: { mode: 'interpolate' },
    async connect(o) {
      const mysql = require('mysql');
      const cfg = { user: o.user, password: o.password, database: o.database, connectTimeout: o.op_timeout_ms };
      if (isUnix(o)) cfg.socketPath = o.socket; else Object.assign(cfg, { host: o.host, port: o.port });
      if (o.tls_ca_pem) cfg.ssl = { ca: o.tls_ca_pem };
      const c = mysql.createConnection(cfg);
      const query = (sql, args) => new Promise((resolve, reject) =>
        c.query({ sql, values: args }, (err, rows) => (err ? reject(err) : resolve(rows))));
      await new Promise((resolve, reject) => c.connect((err) => (err ? reject(err) : resolve())));
      // The token the server shows: a user lock this connection holds
      // (none: the connect scenario's connections are unnamed).
      const rows = o.token ? await query('SELECT GET_LOCK(?, 0) AS l, CONNECTION_ID() AS id', [o.token]) : [{}];
      // node-mysql does not prepare on the server: each op is the statement with its key written in.
      c.dbsockLookup = (key) => query(o.statement, [key]);
      return [c, { conn_id: rows[0].id }];
    },
    async lookup(c, key) {
      const rows = await c.dbsockLookup(key);
      return rows.length ? Object.values(rows[0])[0] : null;
    },
    close: (c) => new Promise((resolve) => c.end(() => resolve())),
  }),
};
