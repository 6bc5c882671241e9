// An independent check of dbsock's Java stack: the same JDBC drivers, timed
// by a plain program that shares no code with dbsock or its agent, on a
// server of yours, over TCP and then over its Unix socket. It prints each
// path's mean and p50 per op and the TCP/Unix ratio of the means, the
// figure dbsock's speedup_mean of the unix comparison gives for the Java
// stack on the same server (run both alone, pinned to the same CPU, on a
// quiet machine: on a shared one the numbers mean little).
//
//   CP=/usr/share/java/postgresql.jar:/usr/share/java/mariadb-java-client.jar:/usr/share/java/jna.jar:/usr/share/java/junixsocket-common.jar
//   java -cp $CP scripts/peers/Peer.java postgres|mysql --tcp HOST:PORT --unix PATH
//       [--user NAME] [--password-file FILE] [--database NAME] [--n 20000] [--warmup 5000] [--rounds 3]
//
// PostgreSQL's socket is the socket file (.s.PGSQL.PORT), reached through
// junixsocket's socket factory; MariaDB's through Connector/J's
// localSocket. It makes its own table dbsock_peer(id, v) of 10,000 rows
// (6-byte values, as dbsock's), and looks them up uniformly, one
// connection, closed loop, the lookup prepared on the server once per
// connection (pgjdbc's prepareThreshold=1, Connector/J's
// useServerPrepStmts), each op timed on System.nanoTime. The password is
// read from its file, never from the command line. A dbsock run to compare
// it with, on the same server:
//   dbsock run postgres --provider external --postgres-addr HOST:PORT --postgres-socket PATH \
//     --postgres-password-file FILE --clients java --paths tcp,unix

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import java.util.SplittableRandom;

public class Peer {
    static final int ROWS = 10_000;
    static final String VALUE = "peer-v"; // 6 bytes
    static final String USAGE = "usage: java -cp JARS scripts/peers/Peer.java postgres|mysql --tcp HOST:PORT --unix PATH [--user NAME] [--password-file FILE] [--database NAME] [--n N] [--warmup W] [--rounds R]";

    static void fail(String why) {
        System.err.println("Peer.java: " + why + "\n" + USAGE);
        System.exit(2);
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 1 || !(args[0].equals("postgres") || args[0].equals("mysql"))) fail("which target? postgres or mysql (the Java stack has no Redis client)");
        String target = args[0];
        Map<String, String> o = new HashMap<>(Map.of("n", "20000", "warmup", "5000", "rounds", "3", "user", "", "database", ""));
        for (int i = 1; i < args.length; i += 2) {
            if (!args[i].startsWith("--") || i + 1 >= args.length) fail("option " + args[i] + " needs a value");
            o.put(args[i].substring(2), args[i + 1]);
        }
        if (!o.containsKey("tcp") || !o.containsKey("unix")) fail("give the server's --tcp HOST:PORT and --unix PATH: it compares the two");
        int n = Integer.parseInt(o.get("n")), warmup = Integer.parseInt(o.get("warmup")), rounds = Integer.parseInt(o.get("rounds"));
        if (n < 1 || rounds < 1 || warmup < 0) fail("--n and --rounds must be at least 1, --warmup at least 0");
        String password = "";
        if (o.containsKey("password-file")) password = Files.readString(Path.of(o.get("password-file"))).strip();
        try {
            try (Connection c = connect(target, "tcp", o, password); Statement st = c.createStatement()) {
                if (target.equals("postgres")) {
                    st.execute("CREATE TABLE IF NOT EXISTS dbsock_peer (id integer PRIMARY KEY, v text NOT NULL)");
                    st.execute("INSERT INTO dbsock_peer SELECT g, '" + VALUE + "' FROM generate_series(0, " + (ROWS - 1) + ") g ON CONFLICT (id) DO NOTHING");
                } else {
                    st.execute("CREATE TABLE IF NOT EXISTS dbsock_peer (id INT PRIMARY KEY, v VARCHAR(16) NOT NULL)");
                    StringBuilder b = new StringBuilder("INSERT IGNORE INTO dbsock_peer VALUES ");
                    for (int i = 0; i < ROWS; i++) b.append(i == 0 ? "" : ",").append("(").append(i).append(",'").append(VALUE).append("')");
                    st.execute(b.toString());
                }
            }
            System.out.printf("Peer.java: %s from Java %s, %s, %d ops per path and round, one connection, closed loop%n", target,
                    System.getProperty("java.version"), target.equals("postgres") ? "pgjdbc" : "MariaDB Connector/J", n);
            double[] ratios = new double[rounds];
            for (int r = 0; r < rounds; r++) {
                String[] order = r % 2 == 0 ? new String[] {"tcp", "unix"} : new String[] {"unix", "tcp"};
                Map<String, double[]> got = new HashMap<>();
                for (String path : order) got.put(path, measure(target, path, o, password, n, warmup));
                ratios[r] = got.get("tcp")[0] / got.get("unix")[0];
                System.out.printf("round %d: tcp mean %.1f µs p50 %.1f µs, unix mean %.1f µs p50 %.1f µs, tcp/unix mean %.3f%n", r + 1,
                        got.get("tcp")[0] / 1e3, got.get("tcp")[1] / 1e3, got.get("unix")[0] / 1e3, got.get("unix")[1] / 1e3, ratios[r]);
            }
            Arrays.sort(ratios);
            System.out.printf("median tcp/unix ratio of means over %d rounds: %.3f (compare with dbsock's speedup_mean for the java stack)%n", rounds,
                    (ratios[(rounds - 1) / 2] + ratios[rounds / 2]) / 2);
        } catch (Exception e) {
            System.err.println("Peer.java: " + target + " over " + o.get("tcp") + " and " + o.get("unix") + ": " + e);
            System.exit(1);
        }
    }

    static Connection connect(String target, String path, Map<String, String> o, String password) throws Exception {
        Properties p = new Properties();
        p.setProperty("user", o.get("user"));
        p.setProperty("password", password);
        String hostPort = o.get("tcp");
        if (target.equals("postgres")) {
            p.setProperty("prepareThreshold", "1");
            p.setProperty("sslmode", "disable");
            if (path.equals("unix")) {
                String sock = o.get("unix");
                p.setProperty("socketFactory", "org.newsclub.net.unix.AFUNIXSocketFactory$FactoryArg");
                p.setProperty("socketFactoryArg", sock);
                return DriverManager.getConnection("jdbc:postgresql://localhost:" + sock.substring(sock.lastIndexOf('.') + 1) + "/" + o.get("database"), p);
            }
            return DriverManager.getConnection("jdbc:postgresql://" + hostPort + "/" + o.get("database"), p);
        }
        p.setProperty("useServerPrepStmts", "true");
        if (path.equals("unix")) {
            p.setProperty("localSocket", o.get("unix"));
            return DriverManager.getConnection("jdbc:mariadb://localhost/" + o.get("database"), p);
        }
        return DriverManager.getConnection("jdbc:mariadb://" + hostPort + "/" + o.get("database"), p);
    }

    /** One path's timed ops on a fresh connection: {mean, p50} in ns. */
    static double[] measure(String target, String path, Map<String, String> o, String password, int n, int warmup) throws Exception {
        try (Connection c = connect(target, path, o, password); PreparedStatement ps = c.prepareStatement("SELECT v FROM dbsock_peer WHERE id = ?")) {
            SplittableRandom rng = new SplittableRandom(path.equals("unix") ? 2 : 1);
            for (int i = 0; i < warmup; i++) lookup(ps, rng.nextInt(ROWS));
            long[] ns = new long[n];
            for (int j = 0; j < n; j++) {
                int k = rng.nextInt(ROWS);
                long t0 = System.nanoTime();
                String v = lookup(ps, k);
                ns[j] = System.nanoTime() - t0;
                if (!VALUE.equals(v)) throw new IllegalStateException("key " + k + " over " + path + " read " + v + ", not " + VALUE + ": was the table made?");
            }
            double mean = Arrays.stream(ns).average().orElse(0);
            Arrays.sort(ns);
            return new double[] {mean, ns[n / 2]};
        }
    }

    static String lookup(PreparedStatement ps, int k) throws Exception {
        ps.setInt(1, k);
        try (ResultSet rs = ps.executeQuery()) {
            return rs.next() ? rs.getString(1) : null;
        }
    }
}
