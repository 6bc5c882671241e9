# The Ruby agent's backends (docs/agents.md): one per client library, each
# speaking one protocol family, which chooses it (FAMILIES). A backend
# connects with the settings dbsock gives (a Hash: network, host, port,
# socket, user, password, database, token, statement, no_prepare,
# op_timeout_ms, tls_ca_pem, tls_server_name), does one lookup on the
# connection (lookup), and closes it; it knows nothing of dbsock's
# messages, nor of how its lookups are timed or scheduled (agent.rb).
#
# Libraries (Debian 12's packages): redis-rb (ruby-redis 4.8, its own Ruby
# driver), hiredis (redis-rb over ruby-hiredis' C parser and connection),
# pg (ruby-pg), mysql2 (ruby-mysql2), dalli (ruby-dalli), and Ruby's socket
# library for dbsock's own floor and echo servers.

require "socket"
require "tempfile"

module Backends
  # CA files written for a TLS connection, removed once it is made.
  TEMP = []

  def self.ca_file(o)
    f = Tempfile.create(["dbsock-ca-", ".pem"])
    TEMP << f.path
    f.write(o["tls_ca_pem"])
    f.close
    f.path
  end

  def self.remove_temp
    while (p = TEMP.pop)
      begin
        File.unlink(p)
      rescue Errno::ENOENT
        nil
      end
    end
  end

  def self.timeout(o)
    o["op_timeout_ms"].to_f / 1000
  end

  def self.tls?(o)
    !(o["tls_ca_pem"] || "").empty?
  end

  def self.addr(host, port)
    host.include?(":") ? "[#{host}]:#{port}" : "#{host}:#{port}"
  end

  # A connection and what its ops use (a prepared statement, buffers).
  Held = Struct.new(:conn, :stmt, :out, :into) do
    def close
      conn.close
    end
  end

  # Redis with redis-rb (4.8: RESP2), over its Ruby driver or hiredis.
  class Redis
    attr_reader :name, :version, :family, :tls, :mode

    def initialize(hiredis)
      require "redis"
      @hiredis = hiredis
      if hiredis
        require "redis/connection/hiredis"
        require "hiredis/version"
        @name, @version = "hiredis", "#{::Hiredis::VERSION} (redis-rb #{::Redis::VERSION})"
      else
        @name, @version = "redis-rb", ::Redis::VERSION
      end
      @family, @tls, @mode = "redis", !hiredis, "resp2"
    end

    def connect(o)
      t = Backends.timeout(o)
      kw = { timeout: t, connect_timeout: t, reconnect_attempts: 0 }
      kw[:driver] = :hiredis if @hiredis
      kw[:id] = o["token"] unless (o["token"] || "").empty? # CLIENT SETNAME at connect
      kw[:username] = o["user"] unless (o["user"] || "").empty?
      kw[:password] = o["password"] unless (o["password"] || "").empty?
      if o["network"] == "unix"
        kw[:path] = o["socket"]
      else
        kw[:host], kw[:port] = o["host"], o["port"]
      end
      if Backends.tls?(o)
        raise ArgumentError, "redis-rb's hiredis driver (hiredis-rb #{::Hiredis::VERSION}) has no TLS: measure ruby:hiredis on tcp, tcp6 or unix, or ruby (redis-rb's own driver) on tls" if @hiredis

        require "openssl"
        kw[:ssl] = true
        kw[:ssl_params] = { ca_file: Backends.ca_file(o), verify_mode: OpenSSL::SSL::VERIFY_PEER,
                            verify_hostname: !(o["tls_server_name"] || "").empty? }
      end
      c = ::Redis.new(**kw)
      c.ping
      [c, {}]
    end

    def lookup(c, key)
      c.get(key)
    end
  end

  # PostgreSQL (and PgBouncer) with ruby-pg (libpq): the lookup prepared
  # once per connection, or sent with its parameter per op (exec_params)
  # where the settings say no_prepare.
  class Postgres
    attr_reader :name, :version, :family, :tls, :mode, :unprepared_mode

    def initialize
      require "pg"
      @name, @version, @family, @tls = "pg", PG::VERSION, "postgres", true
      @mode, @unprepared_mode = "prepared", "exec"
    end

    def connect(o)
      kw = { user: o["user"], password: o["password"], dbname: o["database"],
             connect_timeout: [1, o["op_timeout_ms"].to_i / 1000].max, sslmode: "disable" }
      kw[:application_name] = o["token"] unless (o["token"] || "").empty?
      if o["network"] == "unix" # libpq takes the socket's directory and the port its name ends with
        kw[:host], kw[:port] = File.dirname(o["socket"]), o["socket"].rpartition(".").last
      else
        kw[:host], kw[:port] = o["host"], o["port"]
      end
      kw.update(sslmode: "verify-ca", sslrootcert: Backends.ca_file(o)) if Backends.tls?(o)
      c = PG.connect(kw.compact)
      if o["no_prepare"] # a pooler in transaction pooling cannot keep a prepared statement
        return [Held.new(c, [:exec, o["statement"]]), { "conn_id" => c.backend_pid }]
      end

      c.prepare("dbsock_lookup", o["statement"]) # once per connection
      [Held.new(c, [:prepared, "dbsock_lookup"]), { "conn_id" => c.backend_pid }]
    rescue StandardError
      c&.close
      raise
    end

    def lookup(h, key)
      how, stmt = h.stmt
      r = how == :prepared ? h.conn.exec_prepared(stmt, [key]) : h.conn.exec_params(stmt, [key])
      r.ntuples.zero? ? nil : r.getvalue(0, 0)
    end
  end

  # MariaDB/MySQL with mysql2 (libmariadb): the lookup prepared on the
  # server once per connection (mysql_stmt_prepare), or the key written
  # into the statement's text where the settings say no_prepare.
  class MySQL
    attr_reader :name, :version, :family, :tls, :mode, :unprepared_mode

    def initialize
      require "mysql2"
      @name, @version, @family, @tls = "mysql2", Mysql2::VERSION, "mysql", true
      @mode, @unprepared_mode = "prepared", "interpolate"
    end

    def connect(o)
      t = [1, o["op_timeout_ms"].to_i / 1000].max
      kw = { username: o["user"], password: o["password"] || "", database: o["database"], as: :array,
             connect_timeout: t, read_timeout: t, write_timeout: t }
      if o["network"] == "unix"
        kw[:socket], kw[:host] = o["socket"], "localhost"
      else
        kw[:host], kw[:port] = o["host"], o["port"]
      end
      kw.update(sslca: Backends.ca_file(o), ssl_mode: :verify_ca) if Backends.tls?(o)
      c = Mysql2::Client.new(**kw)
      info = {}
      unless (o["token"] || "").empty? # the token the server shows (none: a connect scenario's op opens unnamed)
        row = c.query("SELECT GET_LOCK('#{c.escape(o['token'])}', 0), CONNECTION_ID()").first
        info["conn_id"] = row[1]
      end
      return [Held.new(c, [:text, o["statement"]]), info] if o["no_prepare"]

      [Held.new(c, [:prepared, c.prepare(o["statement"])]), info]
    rescue StandardError
      c&.close
      raise
    end

    def lookup(h, key)
      how, stmt = h.stmt
      rows = if how == :prepared
               stmt.execute(key)
             else
               h.conn.query(stmt.sub("?", Integer(key).to_s))
             end
      row = rows.first
      row && row[0]
    end
  end

  # memcached with dalli, reached when it connects (a version command).
  class Memcached
    attr_reader :name, :version, :family, :tls, :mode

    def initialize
      require "dalli"
      @name, @version, @family, @tls, @mode = "dalli", Dalli::VERSION, "memcached", false, nil
    end

    def connect(o)
      raise ArgumentError, "the agent's dalli connection has no TLS: connect to memcached on tcp, tcp6 or unix" if Backends.tls?(o)

      t = Backends.timeout(o)
      server = o["network"] == "unix" ? o["socket"] : Backends.addr(o["host"], o["port"])
      kw = { socket_timeout: t, socket_max_failures: 1, down_retry_delay: 0, serializer: Raw, compress: false }
      kw.update(username: o["user"], password: o["password"]) unless (o["password"] || "").empty?
      c = Dalli::Client.new(server, kw)
      # dalli logs a server it cannot reach and answers nil: no version is
      # the connection's failure.
      v = c.version.values.first
      raise IOError, "dalli reached no memcached at #{server} (its warnings are on stderr)" if v.nil?
      info = {}
      sock = c.instance_variable_get(:@ring)&.servers&.first&.sock
      if o["network"] != "unix" && sock.respond_to?(:local_address)
        a = sock.local_address
        info["local_addr"] = Backends.addr(a.ip_address, a.ip_port)
      end
      [c, info]
    end

    def lookup(c, key)
      c.get(key)
    end

    # Values as the server holds them: dbsock seeds plain bytes.
    module Raw
      def self.dump(v)
        v
      end

      def self.load(v)
        v
      end
    end
  end

  # dbsock's own servers (floor, echo): the ping-pong of one message
  # through Ruby's socket library, in blocking calls (the socket's
  # SO_RCVTIMEO and SO_SNDTIMEO bound an op).
  class PingPong
    CHUNK = 32 << 10 # the most an op writes before it reads back
    attr_reader :name, :version, :family, :tls, :mode

    def initialize
      require "io/nonblock"
      @name, @version, @family, @tls, @mode = "socket", RUBY_VERSION, "pingpong", false, nil
    end

    def self.read_frame(s)
      n = s.read(1)
      text = n.nil? ? nil : s.read(n.getbyte(0))
      raise EOFError, "the server closed the connection" if text.nil? || text.bytesize < n.getbyte(0)

      text
    end

    def connect(o)
      raise ArgumentError, "dbsock's own servers have no TLS" if Backends.tls?(o)

      t = Backends.timeout(o)
      if o["network"] == "unix"
        s = Socket.unix(o["socket"])
      else
        s = Socket.tcp(o["host"], o["port"], connect_timeout: t)
        s.setsockopt(Socket::IPPROTO_TCP, Socket::TCP_NODELAY, 1)
      end
      s.nonblock = false # blocking calls, as a plain client makes them
      tv = [t.to_i, ((t - t.to_i) * 1_000_000).to_i].pack("l_l_")
      s.setsockopt(Socket::SOL_SOCKET, Socket::SO_RCVTIMEO, tv)
      s.setsockopt(Socket::SOL_SOCKET, Socket::SO_SNDTIMEO, tv)
      # The server's greeting, then the frame that names the token
      # ("hello TOKEN", the server's own word), answered with "ok ID"
      # (none with no token: the connect scenario's connections are
      # unnamed).
      self.class.read_frame(s)
      info = {}
      unless (o["token"] || "").empty?
        frame = "hello #{o['token']}".b
        s.write("\0".b + frame.bytesize.chr + frame)
        answer = self.class.read_frame(s)
        unless answer.start_with?("ok ")
          s.close
          raise IOError, "the server answered the token's frame with #{answer.inspect}"
        end
        info["conn_id"] = Integer(answer[3..])
      end
      if o["network"] != "unix"
        a = s.local_address
        info["local_addr"] = Backends.addr(a.ip_address, a.ip_port)
      end
      out = "ping".b + ("\0" * (CHUNK - 4)).b
      [Held.new(s, nil, out, String.new(capacity: CHUNK, encoding: Encoding::BINARY)), info]
    end

    def lookup(h, size)
      s, out, into, done = h.conn, h.out, h.into, 0
      first = nil
      while done < size
        k = [size - done, CHUNK].min
        s.syswrite(k == CHUNK ? out : out.byteslice(0, k))
        got = 0
        while got < k
          s.sysread(k - got, into)
          first ||= into.getbyte(0)
          got += into.bytesize
        end
        done += k
      end
      raise IOError, "the server echoed other bytes than it was sent" if size.positive? && first != 0x70 # "p"

      size # the bytes read back
    end
  end

  # The libraries by name, and each protocol family's, the first its
  # default: the family the agent is started with chooses among them.
  LIBRARIES = {
    "redis-rb" => -> { Redis.new(false) },
    "hiredis" => -> { Redis.new(true) },
    "pg" => -> { Postgres.new },
    "mysql2" => -> { MySQL.new },
    "dalli" => -> { Memcached.new },
    "socket" => -> { PingPong.new }
  }.freeze
  FAMILIES = { "redis" => %w[redis-rb hiredis], "postgres" => %w[pg], "mysql" => %w[mysql2], "memcached" => %w[dalli],
               "pingpong" => %w[socket] }.freeze
end
