// dbsock's Java agent (docs/agents.md): java -jar dbsock-agent.jar FAMILY [LIBRARY].
//
// Opens connections with one Java client library, the backend LIBRARY (its
// family's first, by default) of the class named after FAMILY (Backend.java
// says how; each family's file says its libraries), times each lookup of a block or a
// load on System.nanoTime (CLOCK_MONOTONIC), checks each value's length and
// returns each op's latency (and, paced at a rate, its lag behind its due
// time). Each connection lives in a thread of its own from its open to its
// close, as an application's pool of JVM threads runs its connections.
// This class names no database and no library: a backend (Backend.java)
// only connects, looks a key up, closes and says its version and mode.
//
// Its Makefile compiles it with the backends into dbsock-agent.jar, whose
// manifest puts the drivers' jars on its classpath: the drivers are found
// by their class names, so that a missing one fails only the library that
// needs it.

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.locks.LockSupport;

public class Agent {
    static final int MAX_CONNECTIONS = 256; // the most connections one load may have (the hello says it)
    static final int MAX_WORKERS = 1024; // the most connections open at once, each its thread
    static final long MAX_LOAD_OPS = 1_000_000; // the most ops one load may have in all
    static final int MAX_FAILS = 10; // failed ops in a row that end a connection's part of a load

    static String str(Map<String, Object> m, String k) {
        return Json.str(m, k);
    }

    static long num(Map<String, Object> m, String k) {
        return Json.num(m, k);
    }

    static Map<String, Object> msg(Object... kv) {
        return Json.msg(kv);
    }

    static String errorText(Throwable e) {
        String m = e.getMessage();
        return e.getClass().getSimpleName() + ": " + (m == null ? "" : m);
    }

    /** Writes the run's CA to a private temporary file in TMPDIR, for a backend whose library reads it from one; its path. */
    static Path caFile(Map<String, Object> o) throws IOException {
        String dir = System.getenv("TMPDIR");
        Path p = Files.createTempFile(Path.of(dir == null || dir.isEmpty() ? "/tmp" : dir), "dbsock-ca-", ".pem");
        Files.writeString(p, str(o, "tls_ca_pem"));
        return p;
    }

    // ---- The ops, blocks and loads: no database named below.

    static long size(Object v) {
        if (v instanceof Long) return (Long) v;
        return v == null ? -1 : v.toString().getBytes(StandardCharsets.UTF_8).length;
    }

    static String check(Object v, long want) {
        long n = size(v);
        if (n == want) return null;
        return v == null ? "no value" : "value of " + n + " bytes, want " + want;
    }

    interface Op {
        Object call(Object key) throws Exception;
    }

    /** The op of a block or a load of scenario ("" or "connect"): the connect scenario's op opens a connection of its own with the open o less its token, looks up on it and closes it, timed as one op. */
    static Op opFor(Backend lib, Backend.Conn c, String scenario, Map<String, Object> o) {
        if (scenario.equals("connect")) {
            Map<String, Object> unnamed = new LinkedHashMap<>(o);
            unnamed.put("token", "");
            return key -> {
                Backend.Conn cc = lib.connect(unnamed);
                try {
                    return cc.lookup(key);
                } finally {
                    cc.close();
                }
            };
        }
        if (!scenario.isEmpty()) throw new IllegalArgumentException("scenario \"" + scenario + "\": this agent times \"connect\" and lookups on open connections");
        return c::lookup;
    }

    static Map<String, Object> block(Backend lib, Backend.Conn c, Map<String, Object> m, Map<String, Object> o) {
        List<?> keys = (List<?>) m.get("keys");
        long want = num(m, "value_length"), warmup = num(m, "warmup");
        Op op = opFor(lib, c, str(m, "scenario"), o);
        for (long i = 0; i < warmup; i++) {
            try {
                op.call(keys.get((int) (i % keys.size())));
            } catch (Exception e) {
                // an untimed op: its error is not the block's
            }
        }
        long[] ns = new long[keys.size()];
        List<Object> errors = new ArrayList<>();
        for (int i = 0; i < ns.length; i++) {
            Object v = null;
            String err = null;
            long t0 = System.nanoTime();
            try {
                v = op.call(keys.get(i));
            } catch (Exception e) {
                err = errorText(e);
            }
            ns[i] = System.nanoTime() - t0;
            if (err == null) err = check(v, want);
            if (err != null) errors.add(msg("index", i, "message", err.length() > 500 ? err.substring(0, 500) : err));
        }
        return msg("type", "block_result", "id", m.get("id"), "ns", ns, "errors", errors);
    }

    // prctl(2) through JNA, found by name on the classpath (where a driver's
    // Unix socket needs it); nothing without it.
    static final Object PRCTL;
    static final java.lang.reflect.Method INVOKE_INT;

    static {
        Object fn = null;
        java.lang.reflect.Method m = null;
        try {
            Class<?> f = Class.forName("com.sun.jna.Function");
            fn = f.getMethod("getFunction", String.class, String.class).invoke(null, "c", "prctl");
            m = f.getMethod("invokeInt", Object[].class);
        } catch (Throwable e) {
            fn = null;
        }
        PRCTL = fn;
        INVOKE_INT = m;
    }

    /** This thread's sleeps end within a µs of their time, not the default 50 µs (PR_SET_TIMERSLACK). */
    static void timerSlack() {
        if (PRCTL == null) return;
        try {
            INVOKE_INT.invoke(PRCTL, (Object) new Object[] {29, 1L, 0L, 0L, 0L});
        } catch (Exception e) {
            // the default slack: its lag is reported as any other
        }
    }

    static long sleepUntil(long t) {
        long now;
        while ((now = System.nanoTime()) < t) LockSupport.parkNanos(t - now);
        return now;
    }

    /** One connection's part of a load from T0: closed loop, or each op started at its due time (or when the op before it ends, if later), waited for in parkNanos. */
    static Map<String, Object> runLoad(Backend lib, Backend.Conn c, Map<String, Object> part, long t0, Map<String, Object> o) {
        List<?> keys = (List<?>) part.get("keys");
        long want = num(part, "value_length"), interval = num(part, "interval_ns"), duration = num(part, "duration_ns");
        int n = (int) num(part, "n");
        long end = duration > 0 ? t0 + duration : Long.MAX_VALUE;
        long[] ns = new long[n], lags = interval > 0 ? new long[n] : null;
        List<Object> errors = new ArrayList<>();
        Op op = opFor(lib, c, str(part, "scenario"), o);
        int j = 0, fails = 0;
        timerSlack();
        long due = t0 + num(part, "offset_ns");
        if (interval == 0) sleepUntil(t0); // every connection starts at T0
        while (j < n) {
            long start;
            if (interval > 0) {
                if (due >= end) break;
                start = sleepUntil(due);
            } else {
                start = System.nanoTime();
                if (start >= end) break;
            }
            Object v = null;
            String err = null;
            try {
                v = op.call(keys.get(j % keys.size()));
            } catch (Exception e) {
                err = errorText(e);
            }
            ns[j] = System.nanoTime() - start;
            if (lags != null) {
                lags[j] = start - due;
                due += interval;
            }
            if (err == null) err = check(v, want);
            j++;
            if (err != null) {
                errors.add(msg("index", j - 1, "message", err.length() > 500 ? err.substring(0, 500) : err));
                if (++fails >= MAX_FAILS) break;
            } else {
                fails = 0;
            }
        }
        Map<String, Object> r = msg("id", part.get("id"), "ns", j < n ? java.util.Arrays.copyOf(ns, j) : ns, "errors", errors);
        if (lags != null) r.put("lag_ns", j < n ? java.util.Arrays.copyOf(lags, j) : lags);
        return r;
    }

    static final Map<String, Object> END = msg("type", "end");

    /** A connection's worker: a thread of its own from its open to its close. Requests: open, block, close; a load's part as warm (answered ready), then go with T0 (answered with its ops) or cancel (no answer). */
    static final class Worker {
        final String cid;
        final BlockingQueue<Map<String, Object>> requests = new LinkedBlockingQueue<>(), answers = new LinkedBlockingQueue<>();
        final Thread thread;

        Worker(Backend lib, String cid) {
            this.cid = cid;
            thread = new Thread(() -> work(lib), "dbsock-" + (cid.length() > 40 ? cid.substring(0, 40) : cid));
            thread.setDaemon(true);
            thread.start();
        }

        Map<String, Object> take() throws InterruptedException {
            return answers.take();
        }

        void put(Map<String, Object> m) {
            requests.add(m);
        }

        void work(Backend lib) {
            Backend.Conn c = null;
            Map<String, Object> o = null;
            try {
                while (true) {
                    Map<String, Object> m = requests.take();
                    if (m == END) return;
                    try {
                        switch (str(m, "type")) {
                            case "open": {
                                c = lib.connect(m);
                                o = m;
                                Map<String, Object> a = msg("type", "opened", "id", m.get("id"));
                                if (c.serverId() != null) a.put("conn_id", c.serverId());
                                if (c.localAddr() != null) a.put("local_addr", c.localAddr());
                                answers.add(a);
                                break;
                            }
                            case "block":
                                answers.add(block(lib, c, m, o));
                                break;
                            case "warm": {
                                List<?> keys = (List<?>) m.get("keys");
                                Op op = opFor(lib, c, str(m, "scenario"), o);
                                for (long i = 0; i < num(m, "warmup"); i++) {
                                    try {
                                        op.call(keys.get((int) (i % keys.size())));
                                    } catch (Exception e) {
                                        // an untimed op
                                    }
                                }
                                answers.add(msg("type", "ready"));
                                Map<String, Object> go = requests.take();
                                if (go == END) return;
                                if ("go".equals(go.get("type"))) answers.add(msg("type", "part", "result", runLoad(lib, c, m, num(go, "t0"), o)));
                                break;
                            }
                            case "close": {
                                Backend.Conn cc = c;
                                c = null;
                                cc.close();
                                answers.add(msg("type", "closed", "id", m.get("id")));
                                return;
                            }
                            default:
                                answers.add(msg("type", "error", "message", "the worker got an unknown request " + m.get("type")));
                        }
                    } catch (Exception e) {
                        answers.add(msg("type", "error", "id", str(m, "id"), "message", errorText(e)));
                    }
                }
            } catch (InterruptedException e) {
                // ended
            } catch (Throwable e) {
                System.err.println("dbsock-" + cid + ": " + e);
                answers.add(msg("type", "error", "id", cid, "message", "its worker thread failed: " + errorText(e)));
            } finally {
                if (c != null) c.close();
            }
        }

        void end(long waitMs) {
            requests.add(END);
            try {
                thread.join(waitMs);
            } catch (InterruptedException e) {
                // ending anyway
            }
        }
    }

    final String family;
    final Backend lib;
    final Map<String, Worker> workers = new LinkedHashMap<>();

    Agent(String family, Backend lib) {
        this.family = family;
        this.lib = lib;
    }

    Worker worker(String cid) {
        Worker w = workers.get(cid);
        if (w == null) throw new IllegalArgumentException("no connection " + cid + " is open: open it first");
        return w;
    }

    Map<String, Object> open(Map<String, Object> m) throws InterruptedException {
        String cid = str(m, "id");
        if (cid.isEmpty()) throw new IllegalArgumentException("an open needs an id (a string that names the connection)");
        Object family = m.get("family"); // protocol 1: none, the library the agent was started with
        if (family != null && !this.family.equals(family)) throw new IllegalArgumentException("this agent speaks " + this.family + " with " + lib.library() + ", not family \"" + family + "\": start one for that family's target");
        if (workers.containsKey(cid)) throw new IllegalArgumentException("connection " + cid + " is open already: close it first, or open another id");
        if (workers.size() >= MAX_WORKERS) throw new IllegalArgumentException(MAX_WORKERS + " connections are open, the most this agent keeps: close some first");
        Worker w = new Worker(lib, cid);
        workers.put(cid, w);
        w.put(m);
        Map<String, Object> a = w.take();
        if (!"opened".equals(a.get("type"))) { // the worker has no connection: it goes
            workers.remove(cid);
            w.end(1000);
        }
        return a;
    }

    Map<String, Object> close(Map<String, Object> m) throws InterruptedException {
        Worker w = worker(str(m, "id"));
        w.put(m);
        Map<String, Object> a = w.take();
        workers.remove(w.cid);
        w.end(1000);
        return a;
    }

    Map<String, Object> load(Map<String, Object> m) throws InterruptedException {
        List<?> ids = m.get("ids") instanceof List ? (List<?>) m.get("ids") : List.of();
        List<?> keys = m.get("keys") instanceof List ? (List<?>) m.get("keys") : List.of();
        long interval = num(m, "interval_ns"), duration = num(m, "duration_ns"), maxOps = num(m, "max_ops"), warmup = num(m, "warmup");
        List<?> offsets = m.get("offsets_ns") instanceof List ? (List<?>) m.get("offsets_ns") : null;
        if (ids.isEmpty()) throw new IllegalArgumentException("the load names no connection");
        if (ids.size() > MAX_CONNECTIONS) throw new IllegalArgumentException("the load has " + ids.size() + " connections, over the " + MAX_CONNECTIONS + " this agent runs at once (its hello's max_connections)");
        if (new HashSet<>(ids).size() != ids.size()) throw new IllegalArgumentException("the load names a connection twice");
        if (keys.size() != ids.size() || (offsets != null && offsets.size() != ids.size())) throw new IllegalArgumentException("the load has " + ids.size() + " ids, " + keys.size() + " key lists and " + (offsets == null ? ids.size() : offsets.size()) + " offsets: one each per connection");
        if (interval < 0 || duration < 0 || maxOps < 0 || warmup < 0) throw new IllegalArgumentException("the load's interval_ns, duration_ns, max_ops, warmup and offsets_ns must be >= 0");
        if (duration > 0 && maxOps == 0 && interval == 0) throw new IllegalArgumentException("a closed-loop load with duration_ns needs max_ops > 0 (the ops each connection may do)");
        List<Map<String, Object>> parts = new ArrayList<>();
        List<Worker> ws = new ArrayList<>();
        long total = 0;
        for (int k = 0; k < ids.size(); k++) {
            String cid = String.valueOf(ids.get(k));
            ws.add(worker(cid));
            if (!(keys.get(k) instanceof List)) throw new IllegalArgumentException("connection " + cid + "'s keys are not a list");
            List<?> ks = (List<?>) keys.get(k);
            Object offObj = offsets == null ? Long.valueOf(0) : offsets.get(k);
            if (!(offObj instanceof Long) || (Long) offObj < 0) throw new IllegalArgumentException("the load's interval_ns, duration_ns, max_ops, warmup and offsets_ns must be >= 0");
            long off = (Long) offObj, n;
            if (duration == 0) {
                n = ks.size();
            } else {
                if (ks.isEmpty()) throw new IllegalArgumentException("connection " + cid + " has no keys in the load");
                n = maxOps;
                if (interval > 0) {
                    long due = Math.max(0, Math.floorDiv(duration - off + interval - 1, interval)); // due times before T0 + duration_ns
                    n = maxOps == 0 ? due : Math.min(maxOps, due);
                }
            }
            total += n;
            parts.add(msg("type", "warm", "id", cid, "keys", ks, "warmup", ks.isEmpty() ? 0L : warmup, "value_length", m.get("value_length"),
                    "interval_ns", interval, "offset_ns", off, "duration_ns", duration, "n", n, "scenario", str(m, "scenario")));
        }
        if (total > MAX_LOAD_OPS) throw new IllegalArgumentException("the load has over " + MAX_LOAD_OPS + " ops: split it");
        // Each worker warms its connection up, all at once, and says it is
        // ready; then all get T0, a few ms ahead, and sleep until it.
        for (int k = 0; k < ws.size(); k++) ws.get(k).put(parts.get(k));
        String failed = null;
        List<Worker> ready = new ArrayList<>();
        for (Worker w : ws) {
            Map<String, Object> a = w.take();
            if ("ready".equals(a.get("type"))) ready.add(w);
            else if (failed == null) failed = "connection " + w.cid + "'s warm-up: " + a.get("message");
        }
        if (failed != null) {
            for (Worker w : ready) w.put(msg("type", "cancel"));
            throw new IllegalStateException("the load did not start: " + failed);
        }
        long t0 = System.nanoTime() + 5_000_000 + 500_000L * ws.size();
        for (Worker w : ws) w.put(msg("type", "go", "t0", t0));
        List<Object> results = new ArrayList<>();
        for (Worker w : ws) {
            Map<String, Object> a = w.take();
            if (!"part".equals(a.get("type"))) {
                if (failed == null) failed = "connection " + w.cid + ": " + a.get("message");
            } else {
                results.add(a.get("result"));
            }
        }
        if (failed != null) throw new IllegalStateException("the load failed: " + failed);
        return msg("type", "load_result", "results", results);
    }

    static long[] overhead(long n) {
        Op empty = key -> null;
        long[] ns = new long[(int) n];
        for (int i = 0; i < ns.length; i++) {
            long t0 = System.nanoTime();
            try {
                empty.call(null);
            } catch (Exception e) {
                // none
            }
            ns[i] = System.nanoTime() - t0;
        }
        return ns;
    }

    Map<String, Object> answer(Map<String, Object> m) throws Exception {
        switch (str(m, "type")) {
            case "open": return open(m);
            case "block": {
                Worker w = worker(str(m, "id"));
                w.put(m);
                return w.take();
            }
            case "load": return load(m);
            case "overhead": return msg("type", "overhead_result", "ns", overhead(num(m, "n")));
            case "close": return close(m);
            default: return msg("type", "error", "message", "unknown message type \"" + str(m, "type") + "\"");
        }
    }

    void serve(BufferedReader in, Writer out) throws IOException {
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) continue; // not a request: nothing to answer
            Map<String, Object> m = null;
            Map<String, Object> reply;
            try {
                m = Json.obj(Json.parse(line), "a request");
                reply = answer(m);
            } catch (Exception e) {
                String cid = "";
                if (m != null) {
                    cid = str(m, "id");
                    if (cid.isEmpty() && m.get("ids") instanceof List && !((List<?>) m.get("ids")).isEmpty()) cid = String.valueOf(((List<?>) m.get("ids")).get(0));
                }
                reply = msg("type", "error", "id", cid, "message", errorText(e));
            }
            StringBuilder b = new StringBuilder();
            Json.write(reply, b);
            out.write(b.append('\n').toString());
            out.flush();
        }
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 1 || args.length > 2) {
            System.err.println("usage: java -jar dbsock-agent.jar FAMILY [LIBRARY]");
            System.exit(2);
        }
        String family = args[0];
        Backend lib;
        try {
            lib = Backend.of(family, args.length > 1 ? args[1] : "");
        } catch (RuntimeException e) {
            System.err.println("dbsock-agent.jar: " + e.getMessage());
            System.exit(2);
            return;
        }
        Writer out = new BufferedWriter(new OutputStreamWriter(System.out, StandardCharsets.UTF_8));
        Map<String, Object> caps = msg("families", List.of(family), "tls", lib.tls(), "workers", "threads", "open_loop", true,
                "max_connections", MAX_CONNECTIONS, "connect", true);
        Map<String, Object> hello = msg("type", "hello", "protocol", 2, "language", "java", "runtime_version", System.getProperty("java.version"),
                "library", lib.library(), "library_version", lib.version(), "capabilities", caps);
        if (lib.mode() != null) hello.put("mode", lib.mode());
        if (lib.unpreparedMode() != null) hello.put("unprepared_mode", lib.unpreparedMode());
        StringBuilder b = new StringBuilder();
        Json.write(hello, b);
        out.write(b.append('\n').toString());
        out.flush();
        Agent a = new Agent(family, lib);
        try {
            a.serve(new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)), out);
        } finally {
            for (Worker w : a.workers.values()) w.requests.add(END);
            for (Worker w : a.workers.values()) w.end(1000);
        }
        System.exit(0);
    }
}
