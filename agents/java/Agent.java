// dbsock's Java agent (docs/agents.md): java -cp JARS Agent.java TARGET [LIBRARY].
//
// Opens connections with one Java client library through JDBC (PostgreSQL's
// pgjdbc, over junixsocket's socket factory on the Unix socket; MariaDB
// Connector/J, with its localSocket over JNA) or the JDK's SocketChannel
// (dbsock's own floor and echo servers), times each lookup of a block or a
// load on System.nanoTime (CLOCK_MONOTONIC), checks each value's length and
// returns each op's latency (and, paced at a rate, its lag behind its due
// time). Each connection lives in a thread of its own from its open to its
// close, as an application's pool of JVM threads runs its connections.
//
// It is run from its source (Java 11's source-file mode), so that it
// names no library at compile time: the drivers are found by their class
// names on the classpath stack.json gives, and a missing one fails only
// the library that needs it.

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.locks.LockSupport;
import java.util.jar.JarFile;

public class Agent {
    static final int MAX_CONNECTIONS = 256; // the most connections one load may have (the hello says it)
    static final int MAX_WORKERS = 1024; // the most connections open at once, each its thread
    static final long MAX_LOAD_OPS = 1_000_000; // the most ops one load may have in all
    static final int MAX_FAILS = 10; // failed ops in a row that end a connection's part of a load

    // ---- JSON: objects as LinkedHashMap, arrays as ArrayList, numbers as Long or Double.

    static final class Json {
        final String s;
        int i;

        Json(String s) {
            this.s = s;
        }

        static Object parse(String s) {
            Json j = new Json(s);
            Object v = j.value();
            j.ws();
            if (j.i != s.length()) throw new IllegalArgumentException("JSON: text after the value at " + j.i);
            return v;
        }

        void ws() {
            while (i < s.length() && Character.isWhitespace(s.charAt(i))) i++;
        }

        char next() {
            ws();
            if (i >= s.length()) throw new IllegalArgumentException("JSON: the line ends inside a value");
            return s.charAt(i);
        }

        Object value() {
            char c = next();
            switch (c) {
                case '{': {
                    i++;
                    Map<String, Object> m = new LinkedHashMap<>();
                    if (next() == '}') {
                        i++;
                        return m;
                    }
                    while (true) {
                        if (next() != '"') throw new IllegalArgumentException("JSON: a key is a string, at " + i);
                        String k = string();
                        if (next() != ':') throw new IllegalArgumentException("JSON: ':' expected at " + i);
                        i++;
                        m.put(k, value());
                        char d = next();
                        i++;
                        if (d == '}') return m;
                        if (d != ',') throw new IllegalArgumentException("JSON: ',' or '}' expected at " + (i - 1));
                    }
                }
                case '[': {
                    i++;
                    List<Object> l = new ArrayList<>();
                    if (next() == ']') {
                        i++;
                        return l;
                    }
                    while (true) {
                        l.add(value());
                        char d = next();
                        i++;
                        if (d == ']') return l;
                        if (d != ',') throw new IllegalArgumentException("JSON: ',' or ']' expected at " + (i - 1));
                    }
                }
                case '"':
                    return string();
                default:
                    if (s.startsWith("true", i)) {
                        i += 4;
                        return Boolean.TRUE;
                    }
                    if (s.startsWith("false", i)) {
                        i += 5;
                        return Boolean.FALSE;
                    }
                    if (s.startsWith("null", i)) {
                        i += 4;
                        return null;
                    }
                    int start = i;
                    while (i < s.length() && "+-0123456789.eE".indexOf(s.charAt(i)) >= 0) i++;
                    String n = s.substring(start, i);
                    if (n.isEmpty()) throw new IllegalArgumentException("JSON: unexpected '" + c + "' at " + start);
                    if (n.indexOf('.') < 0 && n.indexOf('e') < 0 && n.indexOf('E') < 0) return Long.parseLong(n);
                    return Double.parseDouble(n);
            }
        }

        String string() {
            i++; // the opening quote
            StringBuilder b = new StringBuilder();
            while (true) {
                if (i >= s.length()) throw new IllegalArgumentException("JSON: a string is not closed");
                char c = s.charAt(i++);
                if (c == '"') return b.toString();
                if (c != '\\') {
                    b.append(c);
                    continue;
                }
                char e = s.charAt(i++);
                switch (e) {
                    case 'n': b.append('\n'); break;
                    case 't': b.append('\t'); break;
                    case 'r': b.append('\r'); break;
                    case 'b': b.append('\b'); break;
                    case 'f': b.append('\f'); break;
                    case 'u': b.append((char) Integer.parseInt(s.substring(i, i + 4), 16)); i += 4; break;
                    default: b.append(e);
                }
            }
        }

        static void write(Object v, StringBuilder b) {
            if (v == null) {
                b.append("null");
            } else if (v instanceof String) {
                String s = (String) v;
                b.append('"');
                for (int k = 0; k < s.length(); k++) {
                    char c = s.charAt(k);
                    if (c == '"' || c == '\\') b.append('\\').append(c);
                    else if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
                    else b.append(c);
                }
                b.append('"');
            } else if (v instanceof Map) {
                b.append('{');
                boolean first = true;
                for (Map.Entry<?, ?> e : ((Map<?, ?>) v).entrySet()) {
                    if (!first) b.append(',');
                    first = false;
                    write(String.valueOf(e.getKey()), b);
                    b.append(':');
                    write(e.getValue(), b);
                }
                b.append('}');
            } else if (v instanceof long[]) {
                long[] a = (long[]) v;
                b.append('[');
                for (int k = 0; k < a.length; k++) {
                    if (k > 0) b.append(',');
                    b.append(a[k]);
                }
                b.append(']');
            } else if (v instanceof List) {
                b.append('[');
                boolean first = true;
                for (Object o : (List<?>) v) {
                    if (!first) b.append(',');
                    first = false;
                    write(o, b);
                }
                b.append(']');
            } else {
                b.append(v); // Long, Integer, Boolean
            }
        }
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> obj(Object o, String what) {
        if (!(o instanceof Map)) throw new IllegalArgumentException(what + " is not a JSON object");
        return (Map<String, Object>) o;
    }

    static String str(Map<String, Object> m, String k) {
        Object v = m.get(k);
        return v == null ? "" : String.valueOf(v);
    }

    static long num(Map<String, Object> m, String k) {
        Object v = m.get(k);
        if (v == null) return 0;
        if (!(v instanceof Long)) throw new IllegalArgumentException(k + " is " + v + ", not an integer");
        return (Long) v;
    }

    static Map<String, Object> msg(Object... kv) {
        Map<String, Object> m = new LinkedHashMap<>();
        for (int k = 0; k < kv.length; k += 2) m.put((String) kv[k], kv[k + 1]);
        return m;
    }

    static String errorText(Throwable e) {
        String m = e.getMessage();
        return e.getClass().getSimpleName() + ": " + (m == null ? "" : m);
    }

    // ---- Backends: one per library, each speaking one family.

    interface Conn {
        Object op(Object key) throws Exception;

        void close();
    }

    interface Backend {
        String name();

        String version();

        String family();

        boolean tls();

        String mode(); // null: none

        String unpreparedMode();

        Conn open(Map<String, Object> o, Map<String, Object> info) throws Exception;
    }

    /** The version a driver's jar says in its manifest. */
    static String jarVersion(String cls) {
        try {
            Class<?> c = Class.forName(cls);
            String v = c.getPackage() == null ? null : c.getPackage().getImplementationVersion();
            if (v != null) return v;
            try (JarFile j = new JarFile(Path.of(c.getProtectionDomain().getCodeSource().getLocation().toURI()).toFile())) {
                v = j.getManifest().getMainAttributes().getValue("Bundle-Version");
            }
            return v == null ? "unknown" : v;
        } catch (Exception e) {
            throw new IllegalStateException("the driver " + cls + " is not on the classpath (" + errorText(e) + "): install its Debian package (scripts/install-deps.sh --with-stacks)");
        }
    }

    /** Writes the run's CA to a private temporary file in TMPDIR; its path. */
    static Path caFile(Map<String, Object> o) throws IOException {
        String dir = System.getenv("TMPDIR");
        Path p = Files.createTempFile(Path.of(dir == null || dir.isEmpty() ? "/tmp" : dir), "dbsock-ca-", ".pem");
        Files.writeString(p, str(o, "tls_ca_pem"));
        return p;
    }

    static boolean tlsOpen(Map<String, Object> o) {
        return !str(o, "tls_ca_pem").isEmpty();
    }

    static int seconds(Map<String, Object> o) {
        return (int) Math.max(1, (num(o, "op_timeout_ms") + 999) / 1000);
    }

    static String hostPort(Map<String, Object> o) {
        String h = str(o, "host");
        return (h.contains(":") ? "[" + h + "]" : h) + ":" + num(o, "port");
    }

    /** A JDBC connection and its lookup, prepared once. */
    static final class Jdbc implements Conn {
        final Connection c;
        final PreparedStatement ps;

        Jdbc(Connection c, PreparedStatement ps) {
            this.c = c;
            this.ps = ps;
        }

        public Object op(Object key) throws Exception {
            ps.setLong(1, (Long) key);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? rs.getString(1) : null;
            }
        }

        public void close() {
            try {
                c.close();
            } catch (Exception e) {
                // closing: nothing to report
            }
        }
    }

    /** PostgreSQL (and PgBouncer) with pgjdbc: the lookup prepared on the server from its first execution (prepareThreshold 1), or sent unnamed per op where the open says no_prepare; the socket through junixsocket's factory. */
    static final class Postgres implements Backend {
        final String version = jarVersion("org.postgresql.Driver");

        public String name() { return "pgjdbc"; }
        public String version() { return version; }
        public String family() { return "postgres"; }
        public boolean tls() { return true; }
        public String mode() { return "prepared"; }
        public String unpreparedMode() { return "exec"; }

        public Conn open(Map<String, Object> o, Map<String, Object> info) throws Exception {
            Properties p = new Properties();
            p.setProperty("user", str(o, "user"));
            p.setProperty("password", str(o, "password"));
            if (!str(o, "token").isEmpty()) p.setProperty("ApplicationName", str(o, "token"));
            p.setProperty("connectTimeout", String.valueOf(seconds(o)));
            p.setProperty("socketTimeout", String.valueOf(seconds(o)));
            boolean prepare = !Boolean.TRUE.equals(o.get("no_prepare")); // a pooler in transaction pooling keeps no prepared statement
            p.setProperty("prepareThreshold", prepare ? "1" : "0");
            p.setProperty("sslmode", "disable");
            String url;
            if ("unix".equals(str(o, "network"))) {
                String sock = str(o, "socket"); // .../.s.PGSQL.PORT
                p.setProperty("socketFactory", "org.newsclub.net.unix.AFUNIXSocketFactory$FactoryArg");
                p.setProperty("socketFactoryArg", sock);
                url = "jdbc:postgresql://localhost:" + sock.substring(sock.lastIndexOf('.') + 1) + "/" + str(o, "database");
            } else {
                url = "jdbc:postgresql://" + hostPort(o) + "/" + str(o, "database");
            }
            Path ca = null;
            try {
                if (tlsOpen(o)) {
                    ca = caFile(o);
                    p.setProperty("sslmode", "verify-ca");
                    p.setProperty("sslrootcert", ca.toString());
                }
                Connection c = DriverManager.getConnection(url, p);
                try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT pg_backend_pid()")) {
                    rs.next();
                    info.put("conn_id", rs.getLong(1));
                }
                return new Jdbc(c, c.prepareStatement(str(o, "statement").replace("$1", "?")));
            } finally {
                if (ca != null) Files.deleteIfExists(ca);
            }
        }
    }

    /** MariaDB/MySQL with MariaDB Connector/J: the lookup prepared on the server once per connection (useServerPrepStmts), or the key written into the statement's text where the open says no_prepare; the socket through its localSocket (JNA). */
    static final class MySQL implements Backend {
        final String version = jarVersion("org.mariadb.jdbc.Driver");

        public String name() { return "mariadb-java"; }
        public String version() { return version; }
        public String family() { return "mysql"; }
        public boolean tls() { return true; }
        public String mode() { return "prepared"; }
        public String unpreparedMode() { return "interpolate"; }

        public Conn open(Map<String, Object> o, Map<String, Object> info) throws Exception {
            Properties p = new Properties();
            p.setProperty("user", str(o, "user"));
            p.setProperty("password", str(o, "password"));
            p.setProperty("connectTimeout", String.valueOf(seconds(o) * 1000));
            p.setProperty("socketTimeout", String.valueOf(seconds(o) * 1000));
            p.setProperty("useServerPrepStmts", String.valueOf(!Boolean.TRUE.equals(o.get("no_prepare"))));
            String url;
            if ("unix".equals(str(o, "network"))) {
                p.setProperty("localSocket", str(o, "socket"));
                url = "jdbc:mariadb://localhost/" + str(o, "database");
            } else {
                url = "jdbc:mariadb://" + hostPort(o) + "/" + str(o, "database");
            }
            if (tlsOpen(o)) {
                p.setProperty("useSsl", "true");
                p.setProperty("serverSslCert", str(o, "tls_ca_pem")); // the CA itself, not a file
            }
            Connection c = DriverManager.getConnection(url, p);
            try {
                if (!str(o, "token").isEmpty()) { // the token the server shows (none: a connect scenario's op opens unnamed)
                    try (PreparedStatement st = c.prepareStatement("SELECT GET_LOCK(?, 0), CONNECTION_ID()")) {
                        st.setString(1, str(o, "token"));
                        try (ResultSet rs = st.executeQuery()) {
                            rs.next();
                            info.put("conn_id", rs.getLong(2));
                        }
                    }
                }
                return new Jdbc(c, c.prepareStatement(str(o, "statement")));
            } catch (Exception e) {
                c.close();
                throw e;
            }
        }
    }

    /** dbsock's own servers (floor, echo): the ping-pong of one message through the JDK's SocketChannel, blocking, over TCP or the Unix socket (Java 16 and later). */
    static final class PingPong implements Backend {
        static final int CHUNK = 32 << 10; // the most an op writes before it reads back

        public String name() { return "socketchannel"; }
        public String version() { return System.getProperty("java.version"); }
        public String family() { return "pingpong"; }
        public boolean tls() { return false; }
        public String mode() { return null; }
        public String unpreparedMode() { return null; }

        static String readFrame(SocketChannel ch) throws IOException {
            ByteBuffer n = ByteBuffer.allocate(1);
            readFully(ch, n);
            ByteBuffer text = ByteBuffer.allocate(n.get(0) & 0xff);
            readFully(ch, text);
            return new String(text.array(), StandardCharsets.UTF_8);
        }

        static void readFully(SocketChannel ch, ByteBuffer b) throws IOException {
            while (b.hasRemaining()) {
                if (ch.read(b) < 0) throw new IOException("the server closed the connection");
            }
        }

        public Conn open(Map<String, Object> o, Map<String, Object> info) throws Exception {
            if (tlsOpen(o)) throw new IllegalArgumentException("dbsock's own servers have no TLS");
            SocketChannel ch;
            boolean unix = "unix".equals(str(o, "network"));
            if (unix) {
                ch = SocketChannel.open(UnixDomainSocketAddress.of(str(o, "socket")));
            } else {
                ch = SocketChannel.open(new InetSocketAddress(str(o, "host"), (int) num(o, "port")));
                ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
            }
            try {
                // The server's greeting, then the hello that names the token, answered with "ok ID".
                readFrame(ch);
                String token = str(o, "token");
                if (!token.isEmpty()) {
                    byte[] hello = ("hello " + token).getBytes(StandardCharsets.UTF_8);
                    ByteBuffer b = ByteBuffer.allocate(2 + hello.length);
                    b.put((byte) 0).put((byte) hello.length).put(hello).flip();
                    while (b.hasRemaining()) ch.write(b);
                    String answer = readFrame(ch);
                    if (!answer.startsWith("ok ")) throw new IOException("the server answered the hello with \"" + answer + "\"");
                    info.put("conn_id", Long.parseLong(answer.substring(3)));
                }
                if (!unix) {
                    InetSocketAddress a = (InetSocketAddress) ch.getLocalAddress();
                    String h = a.getAddress().getHostAddress();
                    info.put("local_addr", (h.contains(":") ? "[" + h + "]" : h) + ":" + a.getPort());
                }
            } catch (Exception e) {
                ch.close();
                throw e;
            }
            ByteBuffer out = ByteBuffer.allocateDirect(CHUNK), in = ByteBuffer.allocateDirect(CHUNK);
            out.put("ping".getBytes(StandardCharsets.US_ASCII)).clear();
            return new Conn() {
                public Object op(Object key) throws Exception {
                    long size = (Long) key, done = 0;
                    byte first = 'p';
                    while (done < size) {
                        int k = (int) Math.min(size - done, CHUNK);
                        out.clear().limit(k);
                        while (out.hasRemaining()) ch.write(out);
                        in.clear().limit(k);
                        readFully(ch, in);
                        if (done == 0) first = in.get(0);
                        done += k;
                    }
                    if (size > 0 && first != 'p') throw new IOException("the server echoed other bytes than it was sent");
                    return size; // the bytes read back
                }

                public void close() {
                    try {
                        ch.close();
                    } catch (IOException e) {
                        // closing: nothing to report
                    }
                }
            };
        }
    }

    static Backend backend(String family, String lib) {
        if (lib.isEmpty()) {
            switch (family) {
                case "postgres": lib = "pgjdbc"; break;
                case "mysql": lib = "mariadb-java"; break;
                case "pingpong": lib = "socketchannel"; break;
                default: lib = "?";
            }
        }
        switch (lib) {
            case "pgjdbc": return new Postgres();
            case "mariadb-java": return new MySQL();
            case "socketchannel": return new PingPong();
            default:
                throw new IllegalArgumentException("no library \"" + lib + "\" for protocol family \"" + family + "\" (pgjdbc: postgres; mariadb-java: mysql; socketchannel: pingpong)");
        }
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
    static Op opFor(Backend lib, Conn c, String scenario, Map<String, Object> o) {
        if (scenario.equals("connect")) {
            Map<String, Object> unnamed = new LinkedHashMap<>(o);
            unnamed.put("token", "");
            return key -> {
                Conn cc = lib.open(unnamed, new LinkedHashMap<>());
                try {
                    return cc.op(key);
                } finally {
                    cc.close();
                }
            };
        }
        if (!scenario.isEmpty()) throw new IllegalArgumentException("scenario \"" + scenario + "\": this agent times \"connect\" and lookups on open connections");
        return c::op;
    }

    static Map<String, Object> block(Backend lib, Conn c, Map<String, Object> m, Map<String, Object> o) {
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

    // prctl(2) through JNA, found by name on the classpath (MariaDB
    // Connector/J's localSocket needs it too); nothing without it.
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
    static Map<String, Object> runLoad(Backend lib, Conn c, Map<String, Object> part, long t0, Map<String, Object> o) {
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
            Conn c = null;
            Map<String, Object> o = null;
            try {
                while (true) {
                    Map<String, Object> m = requests.take();
                    if (m == END) return;
                    try {
                        switch (str(m, "type")) {
                            case "open": {
                                Map<String, Object> info = new LinkedHashMap<>();
                                c = lib.open(m, info);
                                o = m;
                                Map<String, Object> a = msg("type", "opened", "id", m.get("id"));
                                a.putAll(info);
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
                                Conn cc = c;
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

    final Backend lib;
    final Map<String, Worker> workers = new LinkedHashMap<>();

    Agent(Backend lib) {
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
        if (family != null && !lib.family().equals(family)) throw new IllegalArgumentException("this agent speaks " + lib.family() + " with " + lib.name() + ", not family \"" + family + "\": start one for that family's target");
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
                m = obj(Json.parse(line), "a request");
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
            System.err.println("usage: java -cp JARS Agent.java FAMILY [LIBRARY]");
            System.exit(2);
        }
        Backend lib;
        try {
            lib = backend(args[0], args.length > 1 ? args[1] : "");
        } catch (RuntimeException e) {
            System.err.println("Agent.java: " + e.getMessage());
            System.exit(2);
            return;
        }
        Writer out = new BufferedWriter(new OutputStreamWriter(System.out, StandardCharsets.UTF_8));
        Map<String, Object> caps = msg("families", List.of(lib.family()), "tls", lib.tls(), "workers", "threads", "open_loop", true,
                "max_connections", MAX_CONNECTIONS, "connect", true);
        Map<String, Object> hello = msg("type", "hello", "protocol", 2, "language", "java", "runtime_version", System.getProperty("java.version"),
                "library", lib.name(), "library_version", lib.version(), "capabilities", caps);
        if (lib.mode() != null) hello.put("mode", lib.mode());
        if (lib.unpreparedMode() != null) hello.put("unprepared_mode", lib.unpreparedMode());
        StringBuilder b = new StringBuilder();
        Json.write(hello, b);
        out.write(b.append('\n').toString());
        out.flush();
        Agent a = new Agent(lib);
        try {
            a.serve(new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)), out);
        } finally {
            for (Worker w : a.workers.values()) w.requests.add(END);
            for (Worker w : a.workers.values()) w.end(1000);
        }
        System.exit(0);
    }
}
