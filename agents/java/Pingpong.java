// The Java agent's pingpong family (dbsock's own floor and echo servers):
// the ping-pong of one message through the JDK's SocketChannel, blocking,
// over TCP or the Unix socket (Java 16 and later), with no op timeout of
// its own (dbsock's deadline bounds it).

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

final class Pingpong implements Backend.Family {
    public List<String> libraries() {
        return List.of("socketchannel");
    }

    public Backend backend(String library) {
        return new Channel();
    }

    static final class Channel implements Backend {
        static final int CHUNK = 32 << 10; // the most an op writes before it reads back

        public String library() { return "socketchannel"; }
        public String version() { return System.getProperty("java.version"); }
        public boolean tls() { return false; }

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

        public Conn connect(Map<String, Object> o) throws Exception {
            if (Backend.tlsOpen(o)) throw new IllegalArgumentException("dbsock's own servers have no TLS");
            SocketChannel ch;
            boolean unix = "unix".equals(Json.str(o, "network"));
            if (unix) {
                ch = SocketChannel.open(UnixDomainSocketAddress.of(Json.str(o, "socket")));
            } else {
                ch = SocketChannel.open(new InetSocketAddress(Json.str(o, "host"), (int) Json.num(o, "port")));
                ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
            }
            Long id = null;
            String local = null;
            try {
                // The server's greeting, then the hello that names the token, answered with "ok ID".
                readFrame(ch);
                String token = Json.str(o, "token");
                if (!token.isEmpty()) {
                    byte[] hello = ("hello " + token).getBytes(StandardCharsets.UTF_8);
                    ByteBuffer b = ByteBuffer.allocate(2 + hello.length);
                    b.put((byte) 0).put((byte) hello.length).put(hello).flip();
                    while (b.hasRemaining()) ch.write(b);
                    String answer = readFrame(ch);
                    if (!answer.startsWith("ok ")) throw new IOException("the server answered the hello with \"" + answer + "\"");
                    id = Long.parseLong(answer.substring(3));
                }
                if (!unix) {
                    InetSocketAddress a = (InetSocketAddress) ch.getLocalAddress();
                    String h = a.getAddress().getHostAddress();
                    local = (h.contains(":") ? "[" + h + "]" : h) + ":" + a.getPort();
                }
            } catch (Exception e) {
                ch.close();
                throw e;
            }
            return new Ping(ch, id, local);
        }
    }

    /** A connection to the server: each op writes size bytes ("ping..."), CHUNK at most at a time, and reads them back. */
    static final class Ping implements Backend.Conn {
        final SocketChannel ch;
        final Long id;
        final String local;
        final ByteBuffer out = ByteBuffer.allocateDirect(Channel.CHUNK), in = ByteBuffer.allocateDirect(Channel.CHUNK);

        Ping(SocketChannel ch, Long id, String local) {
            this.ch = ch;
            this.id = id;
            this.local = local;
            out.put("ping".getBytes(StandardCharsets.US_ASCII)).clear();
        }

        public Object lookup(Object key) throws Exception {
            long size = (Long) key, done = 0;
            byte first = 'p';
            while (done < size) {
                int k = (int) Math.min(size - done, Channel.CHUNK);
                out.clear().limit(k);
                while (out.hasRemaining()) ch.write(out);
                in.clear().limit(k);
                Channel.readFully(ch, in);
                if (done == 0) first = in.get(0);
                done += k;
            }
            if (size > 0 && first != 'p') throw new IOException("the server echoed other bytes than it was sent");
            return size; // the bytes read back
        }

        public Long serverId() {
            return id;
        }

        public String localAddr() {
            return local;
        }

        public void close() {
            try {
                ch.close();
            } catch (IOException e) {
                // closing: nothing to report
            }
        }
    }
}
