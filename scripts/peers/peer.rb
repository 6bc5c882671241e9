# frozen_string_literal: true

# An independent check of dbsock's Ruby stack: the same Ruby library,
# timed by a plain script that shares no code with dbsock or its agent,
# on a server of yours, over TCP and then over its Unix socket. It prints
# each path's mean and p50 per op and the TCP/Unix ratio of the means, the
# figure dbsock's `speedup_mean` of the unix comparison gives for the Ruby
# stack on the same server (run both alone, pinned to the same CPU, on a
# quiet machine: on a shared one the numbers mean little).
#
#   ruby scripts/peers/peer.rb TARGET [options]
#     TARGET           redis, postgres or mysql
#     --library NAME   redis: redis-rb (default) or hiredis; postgres: pg; mysql: mysql2
#     --tcp HOST:PORT  the server's TCP address ([::1]:PORT for IPv6)
#     --unix PATH      its Unix socket (PostgreSQL: the socket file, .s.PGSQL.PORT)
#     --user NAME, --password-file FILE, --database NAME
#     --n N            timed ops per path and round (default 20000), after --warmup W (default 1000)
#     --rounds R       rounds, each TCP then Unix, then Unix then TCP (default 3)
#
# It makes its own data: 10,000 keys peer:0..9999 (Redis) or a table
# dbsock_peer(id, v) of 10,000 rows (SQL), each value 6 bytes, as dbsock's
# own rows are; the lookups are uniform over them, one connection, closed
# loop, each op timed on CLOCK_MONOTONIC. PostgreSQL's and MariaDB's
# lookups are prepared once per connection, as dbsock's Ruby agent does.
# A dbsock run to compare it with, on the same servers:
#   dbsock run redis --provider external --redis-addr HOST:PORT --redis-socket PATH \
#     --redis-password-file FILE --clients ruby --paths tcp,unix
# The password is read from its file, never from the command line.

require "optparse"

ROWS = 10_000
VALUE = "peer-v" # 6 bytes

opts = { library: nil, n: 20_000, warmup: 1000, rounds: 3 }
parser = OptionParser.new do |o|
  o.banner = "usage: ruby scripts/peers/peer.rb redis|postgres|mysql --tcp HOST:PORT --unix PATH [options]"
  o.on("--library NAME") { |v| opts[:library] = v }
  o.on("--tcp HOST:PORT") { |v| opts[:tcp] = v }
  o.on("--unix PATH") { |v| opts[:unix] = v }
  o.on("--user NAME") { |v| opts[:user] = v }
  o.on("--password-file FILE") { |v| opts[:password_file] = v }
  o.on("--database NAME") { |v| opts[:database] = v }
  o.on("--n N", Integer) { |v| opts[:n] = v }
  o.on("--warmup W", Integer) { |v| opts[:warmup] = v }
  o.on("--rounds R", Integer) { |v| opts[:rounds] = v }
end
begin
  args = parser.parse(ARGV)
rescue OptionParser::ParseError => e
  abort "peer.rb: #{e.message}\n#{parser.banner}"
end
target = args.first
abort "peer.rb: which target? redis, postgres or mysql\n#{parser.banner}" unless %w[redis postgres mysql].include?(target) && args.size == 1
abort "peer.rb: give the server's --tcp HOST:PORT and --unix PATH: it compares the two\n#{parser.banner}" unless opts[:tcp] && opts[:unix]
abort "peer.rb: --n and --rounds must be at least 1, --warmup at least 0" if opts[:n] < 1 || opts[:rounds] < 1 || opts[:warmup].negative?
host, _, port = opts[:tcp].rpartition(":")
host = host.delete_prefix("[").delete_suffix("]")
abort "peer.rb: --tcp #{opts[:tcp]}: want HOST:PORT" if host.empty? || port.to_i <= 0
password = nil
if opts[:password_file]
  begin
    password = File.read(opts[:password_file]).chomp
  rescue SystemCallError => e
    abort "peer.rb: read the password from --password-file: #{e.message}"
  end
end

def now
  Process.clock_gettime(Process::CLOCK_MONOTONIC, :nanosecond)
end

# A connection over one path: [a lambda that looks key i up, its close].
def connect(target, library, path, host, port, opts, password)
  case target
  when "redis"
    require "redis"
    require "redis/connection/hiredis" if library == "hiredis"
    kw = path == :unix ? { path: opts[:unix] } : { host: host, port: port.to_i }
    kw[:driver] = :hiredis if library == "hiredis"
    kw[:username] = opts[:user] if opts[:user]
    kw[:password] = password if password
    c = Redis.new(**kw)
    [->(i) { c.get("peer:#{i}") }, -> { c.close }, c]
  when "postgres"
    require "pg"
    kw = { user: opts[:user], password: password, dbname: opts[:database], sslmode: "disable" }
    if path == :unix
      kw[:host], kw[:port] = File.dirname(opts[:unix]), opts[:unix].rpartition(".").last
    else
      kw[:host], kw[:port] = host, port
    end
    c = PG.connect(kw.compact)
    [->(i) { c.exec_prepared("peer_get", [i]).getvalue(0, 0) }, -> { c.close }, c]
  when "mysql"
    require "mysql2"
    kw = { username: opts[:user], password: password, database: opts[:database], as: :array }
    if path == :unix
      kw[:socket], kw[:host] = opts[:unix], "localhost"
    else
      kw[:host], kw[:port] = host, port.to_i
    end
    c = Mysql2::Client.new(**kw.compact)
    st = nil
    [->(i) { (st ||= c.prepare("SELECT v FROM dbsock_peer WHERE id = ?")).execute(i).first[0] }, -> { c.close }, c]
  end
end

def seed(target, c)
  case target
  when "redis"
    ROWS.times.each_slice(1000) { |s| c.mset(*s.flat_map { |i| ["peer:#{i}", VALUE] }) }
  when "postgres"
    c.exec("CREATE TABLE IF NOT EXISTS dbsock_peer (id integer PRIMARY KEY, v text NOT NULL)")
    c.exec("INSERT INTO dbsock_peer SELECT g, '#{VALUE}' FROM generate_series(0, #{ROWS - 1}) g ON CONFLICT (id) DO NOTHING")
  when "mysql"
    c.query("CREATE TABLE IF NOT EXISTS dbsock_peer (id INT PRIMARY KEY, v VARCHAR(16) NOT NULL)")
    ROWS.times.each_slice(1000) { |s| c.query("INSERT IGNORE INTO dbsock_peer VALUES #{s.map { |i| "(#{i}, '#{VALUE}')" }.join(',')}") }
  end
end

library = opts[:library] || { "redis" => "redis-rb", "postgres" => "pg", "mysql" => "mysql2" }[target]
ok = { "redis" => %w[redis-rb hiredis], "postgres" => %w[pg], "mysql" => %w[mysql2] }[target]
abort "peer.rb: --library #{library}: #{target} is read with #{ok.join(' or ')}" unless ok.include?(library)

# One path's timed ops on a fresh connection: their latencies in ns.
def measure(target, library, path, host, port, opts, password)
  op, close, c = connect(target, library, path, host, port, opts, password)
  c.prepare("peer_get", "SELECT v FROM dbsock_peer WHERE id = $1") if target == "postgres"
  rng = Random.new(path == :unix ? 2 : 1)
  opts[:warmup].times { op.call(rng.rand(ROWS)) }
  keys = Array.new(opts[:n]) { rng.rand(ROWS) }
  ns = Array.new(opts[:n], 0)
  keys.each_with_index do |k, j|
    t0 = now
    v = op.call(k)
    ns[j] = now - t0
    raise "peer.rb: key #{k} over #{path} read #{v.inspect}, not #{VALUE.inspect}: was the data made?" unless v == VALUE
  end
  ns
ensure
  close&.call
end

begin
  _, close, c = connect(target, library, :tcp, host, port, opts, password)
  seed(target, c)
  close.call
  puts "peer.rb: #{target} from Ruby #{RUBY_VERSION}, #{library}, #{opts[:n]} ops per path and round, one connection, closed loop"
  ratios = []
  opts[:rounds].times do |r|
    order = r.even? ? %i[tcp unix] : %i[unix tcp]
    means = {}
    p50s = {}
    order.each do |path|
      ns = measure(target, library, path, host, port, opts, password)
      means[path] = ns.sum.fdiv(ns.size)
      p50s[path] = ns.sort[ns.size / 2]
    end
    ratios << means[:tcp] / means[:unix]
    printf("round %d: tcp mean %.1f µs p50 %.1f µs, unix mean %.1f µs p50 %.1f µs, tcp/unix mean %.3f\n",
           r + 1, means[:tcp] / 1e3, p50s[:tcp] / 1e3, means[:unix] / 1e3, p50s[:unix] / 1e3, ratios.last)
  end
  sorted = ratios.sort
  median = (sorted[(sorted.size - 1) / 2] + sorted[sorted.size / 2]) / 2
  printf("median tcp/unix ratio of means over %d rounds: %.3f (compare with dbsock's speedup_mean for the ruby stack)\n",
         ratios.size, median)
rescue StandardError => e
  abort "peer.rb: #{target} over #{opts[:tcp]} and #{opts[:unix]} with #{library}: #{e.class}: #{e.message}"
end
