// A JDBC connection of the Java agent's backends (Postgres.java,
// Mysql.java) and its lookup, prepared once.

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;

final class Jdbc implements Backend.Conn {
    final Connection c;
    final PreparedStatement ps;
    final Long id;

    Jdbc(Connection c, PreparedStatement ps, Long id) {
        this.c = c;
        this.ps = ps;
        this.id = id;
    }

    public Object lookup(Object key) throws Exception {
        ps.setLong(1, (Long) key);
        try (ResultSet rs = ps.executeQuery()) {
            return rs.next() ? rs.getString(1) : null;
        }
    }

    public Long serverId() {
        return id;
    }

    public void close() {
        try {
            c.close();
        } catch (Exception e) {
            // closing: nothing to report
        }
    }
}
