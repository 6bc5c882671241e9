// The Java agent's postgres family (PgBouncer speaks it too): pgjdbc, the
// lookup prepared on the server from its first execution (prepareThreshold
// 1), or sent unnamed per op where the request says no_prepare; the Unix
// socket through junixsocket's socket factory.

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.List;
import java.util.Map;
import java.util.Properties;

final class Postgres implements Backend.Family {
    public List<String> libraries() {
        return List.of("pgjdbc");
    }

    public Backend backend(String library) {
        return new Pgjdbc();
    }

    static final class Pgjdbc implements Backend {
        final String version = Backend.jarVersion("org.postgresql.Driver");

        public String library() { return "pgjdbc"; }
        public String version() { return version; }
        public boolean tls() { return true; }
        public String mode() { return "prepared"; }
        public String unpreparedMode() { return "exec"; }

        public Conn connect(Map<String, Object> o) throws Exception {
            Properties p = new Properties();
            p.setProperty("user", Json.str(o, "user"));
            p.setProperty("password", Json.str(o, "password"));
            if (!Json.str(o, "token").isEmpty()) p.setProperty("ApplicationName", Json.str(o, "token"));
            p.setProperty("connectTimeout", String.valueOf(Backend.seconds(o)));
            p.setProperty("socketTimeout", String.valueOf(Backend.seconds(o)));
            boolean prepare = !Boolean.TRUE.equals(o.get("no_prepare")); // a pooler in transaction pooling keeps no prepared statement
            p.setProperty("prepareThreshold", prepare ? "1" : "0");
            p.setProperty("sslmode", "disable");
            String url;
            if ("unix".equals(Json.str(o, "network"))) {
                String sock = Json.str(o, "socket"); // .../.s.PGSQL.PORT
                p.setProperty("socketFactory", "org.newsclub.net.unix.AFUNIXSocketFactory$FactoryArg");
                p.setProperty("socketFactoryArg", sock);
                url = "jdbc:postgresql://localhost:" + sock.substring(sock.lastIndexOf('.') + 1) + "/" + Json.str(o, "database");
            } else {
                url = "jdbc:postgresql://" + Backend.hostPort(o) + "/" + Json.str(o, "database");
            }
            Path ca = null;
            try {
                if (Backend.tlsOpen(o)) {
                    ca = Agent.caFile(o);
                    p.setProperty("sslmode", "verify-ca");
                    p.setProperty("sslrootcert", ca.toString());
                }
                Connection c = DriverManager.getConnection(url, p);
                long pid;
                try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT pg_backend_pid()")) {
                    rs.next();
                    pid = rs.getLong(1);
                }
                return new Jdbc(c, c.prepareStatement(Json.str(o, "statement").replace("$1", "?")), pid);
            } finally {
                if (ca != null) Files.deleteIfExists(ca);
            }
        }
    }
}
