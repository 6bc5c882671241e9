// A backend of the Java agent (Agent.java): one client library it speaks
// one protocol family with. Each family is a class named after it
// (postgres: Postgres.java, mysql: Mysql.java, pingpong: Pingpong.java)
// that gives its libraries, found by name when the agent starts, so that
// the agent names no family and no library.

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.jar.JarFile;

interface Backend {
    /** Its name, as a run names it (java:NAME). */
    String library();

    /** Its version, as the report gives it. */
    String version();

    /** How it sends the lookup ("prepared"), or null: it says nothing of it. */
    default String mode() {
        return null;
    }

    /** How it sends the lookup where the connection may not prepare it, or null. */
    default String unpreparedMode() {
        return null;
    }

    /** Whether it connects over TLS. */
    boolean tls();

    /** A connection, opened with what the request o gives (network, host, port, socket, user, password, database, token, statement, op_timeout_ms, tls_ca_pem, no_prepare). */
    Conn connect(Map<String, Object> o) throws Exception;

    /** One connection of a backend. */
    interface Conn {
        /** Looks key up: the value (its bytes counted as a String's UTF-8, or a Long: their count), or null when there is none. */
        Object lookup(Object key) throws Exception;

        void close();

        /** The server's id of this connection, or null. */
        default Long serverId() {
            return null;
        }

        /** The connection's own address (host:port) where the server cannot say it, or null. */
        default String localAddr() {
            return null;
        }
    }

    /** A family's libraries. */
    interface Family {
        /** Their names, the default first. */
        List<String> libraries();

        /** The backend of library, one of libraries(). */
        Backend backend(String library);
    }

    /** The backend of family for library ("" for its default): the class named after family (postgres: Postgres). */
    static Backend of(String family, String library) {
        if (!family.matches("[a-z][a-z0-9]*")) throw new IllegalArgumentException("no family \"" + family + "\": a family is a word of lower-case letters (postgres, mysql, pingpong)");
        String name = Character.toUpperCase(family.charAt(0)) + family.substring(1);
        Family f;
        try {
            Class<?> c = Class.forName(name);
            if (!Family.class.isAssignableFrom(c)) throw new ClassNotFoundException(name);
            f = (Family) c.getDeclaredConstructor().newInstance();
        } catch (ClassNotFoundException e) {
            throw new IllegalArgumentException("this agent has no backend for family \"" + family + "\" (no class " + name + " implements Backend.Family): start it with a family it speaks");
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("the backends of family \"" + family + "\": " + e);
        }
        String lib = library.isEmpty() ? f.libraries().get(0) : library;
        if (!f.libraries().contains(lib)) throw new IllegalArgumentException("no library \"" + library + "\" for family \"" + family + "\": give one of " + String.join(", ", f.libraries()));
        return f.backend(lib);
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
            throw new IllegalStateException("the driver " + cls + " is not on the classpath (" + Agent.errorText(e) + "): install its Debian package (scripts/install-deps.sh --with-stacks)");
        }
    }

    static boolean tlsOpen(Map<String, Object> o) {
        return !Json.str(o, "tls_ca_pem").isEmpty();
    }

    static int seconds(Map<String, Object> o) {
        return (int) Math.max(1, (Json.num(o, "op_timeout_ms") + 999) / 1000);
    }

    static String hostPort(Map<String, Object> o) {
        String h = Json.str(o, "host");
        return (h.contains(":") ? "[" + h + "]" : h) + ":" + Json.num(o, "port");
    }
}
