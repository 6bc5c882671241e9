'use strict';
// dbsock's Node.js agent (docs/agents.md, protocol 2): node agent.js FAMILY [LIBRARY].
//
// Opens connections with one Node.js client library from Debian's node-*
// packages, found through NODE_PATH, through the backend of the protocol
// family it is started with (backend_FAMILY.js beside it), which connects,
// looks a key up and closes: this file names no database and no library;
// times each lookup of a block on
// process.hrtime.bigint() (a monotonic clock, in nanoseconds), awaiting
// each op before the next; checks each value's length and returns each
// op's latency. A load runs its connections in this one event loop, as a
// pool does: each connection a chain of awaited ops, all from one T0, back
// to back (closed loop) or each op at its due time (open loop). Nothing else.

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

// The backend of protocol family (backend_FAMILY.js, beside this file)
// with library lib, its default when lib is '': connect, lookup and close,
// its name, pkg (the package whose version the hello gives), tls and mode.
function backend(family, lib) {
  const fail = (why) => {
    process.stderr.write(`agent.js: ${why}\nusage: node agent.js FAMILY [LIBRARY]\n`);
    process.exit(2);
  };
  if (!/^[a-z][a-z0-9_]{0,31}$/.test(family || '')) fail(`${JSON.stringify(family)} is not a protocol family's name`);
  const file = path.join(__dirname, `backend_${family}.js`);
  if (!fs.existsSync(file)) fail(`no backend for protocol family ${family} (backend_${family}.js beside agent.js)`);
  const mod = require(file);
  if (lib && !mod.libraries.includes(lib)) fail(`no library ${lib} for protocol family ${family} (it has ${mod.libraries.join(', ')})`);
  const b = mod.library(lib || mod.libraries[0]);
  b.family = family;
  return b;
}

function size(v) {
  if (v === null || v === undefined) return -1;
  return Buffer.isBuffer(v) ? v.length : Buffer.byteLength(String(v));
}

// opFor is the op of a block or a load of scenario ('' or 'connect') on a
// connection of backend b opened with the open message o: in the connect
// scenario, a connection of its own opened with o less its token
// (unnamed, as an application opens one), the lookup on it and its close,
// timed as one op (as dbsock's Go client times it).
function opFor(b, scenario, o) {
  if (!scenario) return b.lookup;
  if (scenario !== 'connect') throw new Error(`scenario ${JSON.stringify(scenario)}: this agent times "connect" and lookups on open connections`);
  const unnamed = { ...o, token: '' };
  return async (_c, key) => {
    const [c] = await b.connect(unnamed);
    try {
      return await b.lookup(c, key);
    } finally {
      await b.close(c);
    }
  };
}

async function block(b, c, m, o) {
  const keys = m.keys;
  const op = opFor(b, m.scenario || '', o);
  for (let i = 0; i < m.warmup; i++) await op(c, keys[i % keys.length]);
  const ns = [];
  const errors = [];
  for (let i = 0; i < keys.length; i++) {
    let v = null;
    let err = null;
    const t0 = process.hrtime.bigint();
    try {
      v = await op(c, keys[i]);
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

// A load's limits: the most connections, and the most ops in all it keeps
// (dbsock splits its loads into at most 100,000 ops).
const MAX_CONNECTIONS = 256;
const MAX_LOAD_OPS = 1000000;
// A connection's ops end after this many failed in a row.
const MAX_FAILS_IN_A_ROW = 10;

// Open-loop waits. Node's timers (setTimeout) count whole milliseconds
// from the loop's cached time: an op would start up to a millisecond or
// two after its due time. Instead a worker thread of this process sleeps
// in Atomics.wait (a futex with a timeout in microseconds, not a spin)
// until the earliest due time of the connections that wait, and wakes the
// event loop through Atomics.notify, which resolves the loop's
// Atomics.waitAsync at once; the loop then resumes every connection whose
// op is due. Each connection has a slot in shared memory, its due time; the
// thread is woken early only for a due time earlier than its own. The
// thread is started before a load's T0. Where it cannot be, the waits are
// setTimeout's. Linux lets a sleep end up to 50 µs late (its timer slack):
// the main thread sets its own slack to 1 ns, as prctl(PR_SET_TIMERSLACK)
// would, through /proc/self/timerslack_ns, before it starts the thread,
// which takes its slack from it.
const timerThread = `
const { workerData } = require('worker_threads');
const ctl = new Int32Array(workerData.sab, 0, 4); // 0: changed (bumped), 1: fired (bumped), 2: stop, 3: slots in use
const target = new BigInt64Array(workerData.sab, 16, 1); // what it sleeps until; 0 while it looks
const due = new BigInt64Array(workerData.sab, 24, workerData.slots); // each slot's due time, or -1
const NONE = (1n << 62n);
for (;;) {
  const seq = Atomics.load(ctl, 0);
  if (Atomics.load(ctl, 2) !== 0) break;
  Atomics.store(target, 0, 0n);
  let next = NONE;
  const slots = Atomics.load(ctl, 3);
  for (let i = 0; i < slots; i++) {
    const t = Atomics.load(due, i);
    if (t >= 0n && t < next) next = t;
  }
  Atomics.store(target, 0, next);
  const now = process.hrtime.bigint();
  if (next <= now) {
    for (let i = 0; i < slots; i++) {
      const t = Atomics.load(due, i);
      if (t >= 0n && t <= now) Atomics.compareExchange(due, i, t, -1n);
    }
    Atomics.add(ctl, 1, 1);
    Atomics.notify(ctl, 1);
  } else if (next === NONE) {
    Atomics.wait(ctl, 0, seq);
  } else {
    Atomics.wait(ctl, 0, seq, Number(next - now) / 1e6);
  }
}
`;

// Waits until a time: hrtime ns counted from base, as a Number, one wait
// at a time per slot (a load's connection).
class Timer {
  constructor(slots) {
    this.base = process.hrtime.bigint();
    this.waits = new Array(slots).fill(null); // [when, resolve] of each slot waiting
    this.waiting = 0;
    this.slots = 0;
    this.fired = 0;
    this.listening = false;
    this.worker = null;
    try {
      const { Worker } = require('worker_threads');
      if (typeof Atomics.waitAsync !== 'function') throw new Error('no Atomics.waitAsync');
      this.sab = new SharedArrayBuffer(24 + 8 * slots);
      this.ctl = new Int32Array(this.sab, 0, 4);
      this.target = new BigInt64Array(this.sab, 16, 1);
      this.due = new BigInt64Array(this.sab, 24, slots);
      this.due.fill(-1n);
      try {
        fs.writeFileSync('/proc/self/timerslack_ns', '1');
      } catch (e) {
        // the default slack, then
      }
      this.worker = new Worker(timerThread, { eval: true, workerData: { sab: this.sab, slots } });
      this.online = new Promise((resolve) => {
        this.worker.once('online', () => resolve(true));
        this.worker.once('error', () => resolve(false));
        this.worker.once('exit', () => { resolve(false); this.lost(); });
      });
    } catch (e) {
      this.worker = null;
    }
  }

  now() { return Number(process.hrtime.bigint() - this.base); }

  // ready resolves once the waits work, before a load's T0.
  // ready resolves once the waits of slots 0 to slots-1 work, before a
  // load's T0. Between loads the thread does not keep the process alive.
  async ready(slots) {
    if (this.worker && !(await this.online)) this.lost();
    this.slots = slots;
    if (this.worker) {
      Atomics.store(this.ctl, 3, slots);
      this.worker.unref();
    }
  }

  until(slot, when) {
    if (!this.worker) {
      return new Promise((resolve) => {
        const tick = () => {
          const left = when - this.now();
          if (left <= 0) resolve(); else setTimeout(tick, Math.ceil(left / 1e6));
        };
        tick();
      });
    }
    return new Promise((resolve) => {
      this.waits[slot] = [when, resolve];
      this.waiting++;
      const at = this.base + BigInt(Math.ceil(when));
      Atomics.store(this.due, slot, at);
      const t = Atomics.load(this.target, 0);
      if (t === 0n || at < t) {
        Atomics.add(this.ctl, 0, 1);
        Atomics.notify(this.ctl, 0);
      }
      if (!this.listening) this.listen();
    });
  }

  async listen() {
    this.listening = true;
    const w = this.worker;
    w.ref(); // a pending Atomics.waitAsync does not keep the process alive
    while (this.waiting > 0 && this.worker) {
      const fire = Atomics.waitAsync(this.ctl, 1, this.fired);
      if (fire.async) await fire.value;
      this.fired = Atomics.load(this.ctl, 1);
      const now = this.now();
      for (let i = 0; i < this.slots; i++) {
        const x = this.waits[i];
        if (x !== null && x[0] <= now) {
          this.waits[i] = null;
          this.waiting--;
          Atomics.store(this.due, i, -1n);
          x[1]();
        }
      }
    }
    w.unref();
    this.listening = false;
  }

  // lost: the thread ended; the waits left are setTimeout's.
  lost() {
    this.worker = null;
    for (let i = 0; i < this.waits.length; i++) {
      const x = this.waits[i];
      if (x !== null) {
        this.waits[i] = null;
        this.until(i, x[0]).then(x[1]);
      }
    }
    this.waiting = 0;
  }

  stop() {
    if (!this.worker) return;
    Atomics.store(this.ctl, 2, 1);
    Atomics.add(this.ctl, 0, 1);
    Atomics.notify(this.ctl, 0);
  }
}

let timer = null;

function count(m, field) {
  const v = m[field] === undefined || m[field] === null ? 0 : m[field];
  if (!Number.isSafeInteger(v) || v < 0) throw new Error(`a load's ${field} is ${JSON.stringify(m[field])}: it must be a whole number >= 0`);
  return v;
}

// load runs ids' connections at once, each its own chain of awaited ops
// (protocol 2's load), and returns their latencies (and lags, open loop).
async function load(conns, m) {
  const ids = m.ids;
  const keys = m.keys;
  if (!Array.isArray(ids) || ids.length === 0) throw new Error('a load names no connection (ids)');
  if (ids.length > MAX_CONNECTIONS) {
    throw new Error(`a load of ${ids.length} connections: this agent runs at most ${MAX_CONNECTIONS} (its max_connections)`);
  }
  if (!Array.isArray(keys) || keys.length !== ids.length) {
    throw new Error(`a load of ${ids.length} connections has ${Array.isArray(keys) ? keys.length : 'no'} key lists: it needs one per connection`);
  }
  const warmup = count(m, 'warmup');
  const interval = count(m, 'interval_ns');
  const duration = count(m, 'duration_ns');
  const maxOps = count(m, 'max_ops');
  const offsets = m.offsets_ns === undefined || m.offsets_ns === null ? ids.map(() => 0) : m.offsets_ns;
  if (!Array.isArray(offsets) || offsets.length !== ids.length || !offsets.every((o) => Number.isSafeInteger(o) && o >= 0)) {
    throw new Error(`a load of ${ids.length} connections needs offsets_ns: one whole number of ns >= 0 per connection`);
  }
  const scenario = m.scenario || '';
  const runs = [];
  let total = 0;
  for (let c = 0; c < ids.length; c++) {
    const x = conns.get(ids[c]);
    if (!x) throw new Error(`no connection ${JSON.stringify(ids[c])} is open: open it before a load`);
    if (runs.some((r) => r.id === ids[c])) throw new Error(`a load names connection ${JSON.stringify(ids[c])} twice`);
    const ks = keys[c];
    if (!Array.isArray(ks) || ks.length === 0) throw new Error(`a load has no keys for connection ${JSON.stringify(ids[c])}`);
    let n = ks.length;
    if (duration > 0) {
      if (maxOps > 0) n = maxOps;
      else if (interval > 0) n = Math.max(0, Math.ceil((duration - offsets[c]) / interval));
      else throw new Error('a closed-loop load for a duration needs max_ops > 0');
      if (interval > 0) n = Math.min(n, Math.max(0, Math.ceil((duration - offsets[c]) / interval)));
    }
    total += n;
    if (total > MAX_LOAD_OPS) throw new Error(`a load of over ${MAX_LOAD_OPS} ops in all: split it into smaller loads`);
    runs.push({ id: ids[c], slot: c, op: opFor(x.b, scenario, x.o), c: x.c, keys: ks, offset: offsets[c], n, done: 0,
      ns: new Float64Array(n), lag: interval > 0 ? new Float64Array(n) : null, errors: [] });
  }
  if (interval > 0) {
    if (!timer) timer = new Timer(MAX_CONNECTIONS);
    await timer.ready(ids.length);
  }
  // Warm-up: untimed, closed loop, all connections at once.
  await Promise.all(runs.map(async (r) => {
    for (let i = 0; i < warmup; i++) {
      try {
        await r.op(r.c, r.keys[i % r.keys.length]);
      } catch (e) {
        throw new Error(`warm-up op ${i} on connection ${r.id} failed: ${e.name}: ${e.message}`);
      }
    }
  }));

  const valueLength = m.value_length;
  const T0 = process.hrtime.bigint();
  const t0n = timer ? Number(T0 - timer.base) : 0; // T0 on the timer's count
  const run = async (r) => {
    const { op, c, keys: ks, offset, n, ns, lag, errors } = r;
    let fails = 0;
    let j = 0;
    for (; j < n; j++) {
      let due = 0;
      if (interval > 0) {
        due = offset + j * interval;
        if (duration > 0 && due >= duration) break;
        if (Number(process.hrtime.bigint() - T0) < due) await timer.until(r.slot, t0n + due);
      }
      const t0 = process.hrtime.bigint();
      const start = Number(t0 - T0);
      if (interval === 0 && duration > 0 && start >= duration) break;
      let v = null;
      let err = null;
      try {
        v = await op(c, ks[j % ks.length]);
      } catch (e) {
        err = `${e.name}: ${e.message}`;
      }
      ns[j] = Number(process.hrtime.bigint() - t0);
      if (lag) lag[j] = Math.max(0, start - due);
      if (err === null && size(v) !== valueLength) {
        err = v === null ? 'no value' : `value of ${size(v)} bytes, want ${valueLength}`;
      }
      if (err === null) {
        fails = 0;
      } else {
        errors.push({ index: j, message: err.slice(0, 500) });
        if (++fails >= MAX_FAILS_IN_A_ROW) { j++; break; }
      }
    }
    r.done = j;
  };
  await Promise.all(runs.map(run));

  return {
    type: 'load_result',
    results: runs.map((r) => {
      const out = { id: r.id, ns: Array.from(r.ns.subarray(0, r.done)) };
      if (r.lag) out.lag_ns = Array.from(r.lag.subarray(0, r.done));
      out.errors = r.errors;
      return out;
    }),
  };
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

// The backend an open asks for: its family (protocol 2), or, where it names
// none (protocol 1), the one of the target this agent was started with.
function backendOf(b, m) {
  if (m.family === undefined || m.family === null || m.family === '') return b;
  if (m.family === b.family) return b;
  throw new Error(`this agent was started with ${b.name}, which speaks the ${b.family} family, not ${JSON.stringify(m.family)}: ` +
    `start it with a library of that family`);
}

async function handle(b, conns, m) {
  switch (m.type) {
    case 'open': {
      const ob = backendOf(b, m);
      const [c, info] = await ob.connect(m);
      conns.set(m.id, { b: ob, c, o: m });
      return { type: 'opened', id: m.id, ...info };
    }
    case 'block': {
      const x = conns.get(m.id);
      if (!x) throw new Error(`no connection ${JSON.stringify(m.id)} is open: open it before its block`);
      return block(x.b, x.c, m, x.o);
    }
    case 'load':
      return load(conns, m);
    case 'overhead':
      return overhead(m.n);
    case 'close': {
      const x = conns.get(m.id);
      if (!x) throw new Error(`no connection ${JSON.stringify(m.id)} is open: nothing to close`);
      await x.b.close(x.c);
      conns.delete(m.id);
      return { type: 'closed', id: m.id };
    }
    default:
      return { type: 'error', id: m.id || '', message: `unknown message type ${m.type}` };
  }
}

async function main() {
  const [family, lib] = process.argv.slice(2);
  const b = backend(family, lib);
  const say = (m) => process.stdout.write(JSON.stringify(m) + '\n');
  say({ type: 'hello', protocol: 2, language: 'node', runtime_version: process.versions.node, library: b.name, library_version: version(b.pkg), ...b.mode,
    capabilities: { families: [b.family], tls: b.tls, workers: 'event-loop', open_loop: true, max_connections: MAX_CONNECTIONS, connect: true } });
  const conns = new Map();
  for await (const line of readline.createInterface({ input: process.stdin, crlfDelay: Infinity })) {
    let m = {};
    try {
      m = JSON.parse(line);
      say(await handle(b, conns, m));
    } catch (e) {
      say({ type: 'error', id: m.id || (Array.isArray(m.ids) && typeof m.ids[0] === 'string' ? m.ids[0] : ''), message: `${e.name}: ${e.message}` });
    }
  }
  for (const x of conns.values()) await x.b.close(x.c);
  if (timer) timer.stop();
}

main().catch((e) => {
  process.stderr.write(`agent.js: ${e.stack}\n`);
  process.exit(1);
});
