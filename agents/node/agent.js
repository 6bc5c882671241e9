'use strict';
// dbsock's Node.js agent (docs/agents.md): node agent.js TARGET [LIBRARY].
//
// Opens connections with one Node.js client library from Debian's node-*
// packages (redis: node-redis; postgres and pgbouncer: node-pg; mysql:
// node-mysql), found through NODE_PATH; times each lookup of a block on
// process.hrtime.bigint() (a monotonic clock, in nanoseconds), awaiting
// each op before the next; checks each value's length and returns each
// op's latency. Nothing else.

const fs = require('fs');
const path = require('path');
const readline = require('readline');

function version(pkg) {
  const main = require.resolve(pkg);
  for (let dir = path.dirname(main); dir !== path.dirname(dir); dir = path.dirname(dir)) {
    const file = path.join(dir, 'package.json');
    if (fs.existsSync(file)) {
      const p = JSON.parse(fs.readFileSync(file, 'utf8'));
      if (p.name === pkg) return p.version;
    }
  }
  return 'unknown';
}

const isUnix = (o) => o.network === 'unix';

const backends = {
  redis: {
    library: 'node-redis', pkg: 'redis',
    async open(o) {
      const { createClient } = require('redis');
      const socket = isUnix(o) ? { path: o.socket } : { host: o.host, port: o.port };
      socket.connectTimeout = o.op_timeout_ms;
      socket.reconnectStrategy = false;
      if (o.tls_ca_pem) Object.assign(socket, { tls: true, ca: o.tls_ca_pem, servername: o.tls_server_name || undefined });
      const c = createClient({ socket, username: o.user || undefined, password: o.password || undefined, name: o.token });
      c.on('error', () => {}); // each op's error is reported by the op
      await c.connect();
      return [c, {}];
    },
    op: (c, key) => c.get(String(key)),
    close: (c) => c.quit(),
  },
  postgres: {
    library: 'node-pg', pkg: 'pg',
    async open(o) {
      const { Client } = require('pg');
      const cfg = { user: o.user, password: o.password, database: o.database, application_name: o.token,
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
    async op(c, key) {
      const r = await c.query({ ...c.dbsockQuery, values: [key] });
      return r.rows.length ? r.rows[0][0] : null;
    },
    close: (c) => c.end(),
  },
  mysql: {
    library: 'node-mysql', pkg: 'mysql',
    async open(o) {
      const mysql = require('mysql');
      const cfg = { user: o.user, password: o.password, database: o.database, connectTimeout: o.op_timeout_ms };
      if (isUnix(o)) cfg.socketPath = o.socket; else Object.assign(cfg, { host: o.host, port: o.port });
      if (o.tls_ca_pem) cfg.ssl = { ca: o.tls_ca_pem };
      const c = mysql.createConnection(cfg);
      const query = (sql, args) => new Promise((resolve, reject) =>
        c.query({ sql, values: args }, (err, rows) => (err ? reject(err) : resolve(rows))));
      await new Promise((resolve, reject) => c.connect((err) => (err ? reject(err) : resolve())));
      // The token the server shows: a user lock this connection holds.
      const rows = await query('SELECT GET_LOCK(?, 0) AS l, CONNECTION_ID() AS id', [o.token]);
      // node-mysql does not prepare on the server: each op is the statement with its key written in.
      c.dbsockLookup = (key) => query(o.statement, [key]);
      return [c, { conn_id: rows[0].id }];
    },
    async op(c, key) {
      const rows = await c.dbsockLookup(key);
      return rows.length ? Object.values(rows[0])[0] : null;
    },
    close: (c) => new Promise((resolve) => c.end(() => resolve())),
  },
};

backends.pgbouncer = backends.postgres;

function size(v) {
  if (v === null || v === undefined) return -1;
  return Buffer.isBuffer(v) ? v.length : Buffer.byteLength(String(v));
}

async function block(b, c, m) {
  const keys = m.keys;
  for (let i = 0; i < m.warmup; i++) await b.op(c, keys[i % keys.length]);
  const ns = [];
  const errors = [];
  for (let i = 0; i < keys.length; i++) {
    let v = null;
    let err = null;
    const t0 = process.hrtime.bigint();
    try {
      v = await b.op(c, keys[i]);
    } catch (e) {
      err = `${e.name}: ${e.message}`;
    }
    ns.push(Number(process.hrtime.bigint() - t0));
    if (err === null && size(v) !== m.value_length) {
      err = v === null ? 'no value' : `value of ${size(v)} bytes, want ${m.value_length}`;
    }
    if (err !== null) errors.push({ index: i, message: err.slice(0, 500) });
  }
  return { type: 'block_result', id: m.id, ns, errors };
}

async function overhead(n) {
  const empty = async () => null;
  const ns = [];
  for (let i = 0; i < n; i++) {
    const t0 = process.hrtime.bigint();
    await empty(null, null);
    ns.push(Number(process.hrtime.bigint() - t0));
  }
  return { type: 'overhead_result', ns };
}

async function handle(b, conns, m) {
  switch (m.type) {
    case 'open': {
      const [c, info] = await b.open(m);
      conns.set(m.id, c);
      return { type: 'opened', id: m.id, ...info };
    }
    case 'block':
      return block(b, conns.get(m.id), m);
    case 'overhead':
      return overhead(m.n);
    case 'close':
      await b.close(conns.get(m.id));
      conns.delete(m.id);
      return { type: 'closed', id: m.id };
    default:
      return { type: 'error', id: m.id || '', message: `unknown message type ${m.type}` };
  }
}

async function main() {
  const [target, lib] = process.argv.slice(2);
  const b = backends[target];
  if (!b || (lib && lib !== b.library)) {
    process.stderr.write(`agent.js: no library ${lib || '(default)'} for target ${target}\n`);
    process.exit(2);
  }
  const say = (m) => process.stdout.write(JSON.stringify(m) + '\n');
  say({ type: 'hello', protocol: 1, language: 'node', runtime_version: process.versions.node, library: b.library, library_version: version(b.pkg),
    ...({ 'node-redis': { mode: 'resp2' }, 'node-pg': { mode: 'prepared', unprepared_mode: 'exec' }, 'node-mysql': { mode: 'interpolate' } }[b.library] || {}) });
  const conns = new Map();
  for await (const line of readline.createInterface({ input: process.stdin, crlfDelay: Infinity })) {
    let m = {};
    try {
      m = JSON.parse(line);
      say(await handle(b, conns, m));
    } catch (e) {
      say({ type: 'error', id: m.id || '', message: `${e.name}: ${e.message}` });
    }
  }
  for (const c of conns.values()) await b.close(c);
}

main().catch((e) => {
  process.stderr.write(`agent.js: ${e.stack}\n`);
  process.exit(1);
});
