// The Java agent's mysql family: MariaDB Connector/J, the lookup prepared
// on the server once per connection (useServerPrepStmts), or the key
// written into the statement's text where the request says no_prepare;
// the Unix socket through its localSocket (JNA).

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;

final class Mysql implements Backend.Family {
    public List<String> libraries() {
        return List.of("mariadb-java");
    }

    public Backend backend(String library) {
        return new MariadbJava();
    }

    static final class MariadbJava implements Backend {
        final String version = Backend.jarVersion("org.mariadb.jdbc.Driver");

        public String library() { return "mariadb-java"; }
        public String version() { return version; }
        public boolean tls() { return true; }
        public String mode() { return "prepared"; }
        public String unpreparedMode() { return "interpolate"; }

        public Conn connect(Map<String, Object> o) throws Exception {
            Properties p = new Properties();
            p.setProperty("user", Json.str(o, "user"));
            p.setProperty("password", Json.str(o, "password"));
            p.setProperty("connectTimeout", String.valueOf(Backend.seconds(o) * 1000));
            p.setProperty("socketTimeout", String.valueOf(Backend.seconds(o) * 1000));
            p.setProperty("useServerPrepStmts", String.valueOf(!Boolean.TRUE.equals(o.get("no_prepare"))));
            String url;
            if ("unix".equals(Json.str(o, "network"))) {
                p.setProperty("localSocket", Json.str(o, "socket"));
                url = "jdbc:mariadb://localhost/" + Json.str(o, "database");
            } else {
                url = "jdbc:mariadb://" + Backend.hostPort(o) + "/" + Json.str(o, "database");
            }
            if (Backend.tlsOpen(o)) {
                p.setProperty("useSsl", "true");
                p.setProperty("serverSslCert", Json.str(o, "tls_ca_pem")); // the CA itself, not a file
            }
            Connection c = DriverManager.getConnection(url, p);
            try {
                Long id = null;
                if (!Json.str(o, "token").isEmpty()) { // the token the server shows (none: a connect scenario's op opens unnamed)
                    try (PreparedStatement st = c.prepareStatement("SELECT GET_LOCK(?, 0), CONNECTION_ID()")) {
                        st.setString(1, Json.str(o, "token"));
                        try (ResultSet rs = st.executeQuery()) {
                            rs.next();
                            id = rs.getLong(2);
                        }
                    }
                }
                return new Jdbc(c, c.prepareStatement(Json.str(o, "statement")), id);
            } catch (Exception e) {
                c.close();
                throw e;
            }
        }
    }
}
