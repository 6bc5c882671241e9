# frozen_string_literal: true

# dbsock's Ruby agent (docs/agents.md): agent.rb [--workers MODEL] FAMILY [LIBRARY].
#
# Opens connections with one Ruby client library (backends.rb), times each
# lookup of a block or a load on CLOCK_MONOTONIC, checks each value's
# length and returns each op's latency (and, paced at a rate, its lag
# behind its due time). Nothing else: dbsock seeds, verifies each
# connection on the server side, and does the statistics.
#
# Workers (agent protocol 2): each connection lives in a worker of its own
# from its open to its close, which opens it, runs its blocks and its part
# of each load. MODEL "processes" (the default) forks a process per
# connection, as Unicorn's and Puma's cluster workers serve a Rails
# application; "threads" runs a thread per connection in the agent's
# process, under its GVL, as Puma's threads do.
#
# This file is the protocol, the workers, the schedule and the failure
# rule; it names no database and no client library. backends.rb has one
# backend per library, chosen by the library dbsock names (the stack's
# stack.json), each serving one family; an open is served by the backend
# of the family it names.

require "json"
require "socket"
require_relative "backends"
require_relative "workers"

def clock
  Process.clock_gettime(Process::CLOCK_MONOTONIC, :nanosecond) # one clock for every process of the machine
end

MAX_CONNECTIONS = 256 # the most connections one load may have (the hello says it)
MAX_WORKERS = 1024 # the most connections open at once, each its worker
MAX_LOAD_OPS = 1_000_000 # the most ops one load may have in all (dbsock asks for 100,000 at most)
MAX_FAILS = 10 # failed ops in a row that end a connection's part of a load
PR_SET_PDEATHSIG = 1
PR_SET_TIMERSLACK = 29

# prctl(2) through Fiddle, on Linux; nothing where it is not there.
PRCTL = begin
  require "fiddle"
  Fiddle::Function.new(Fiddle::Handle::DEFAULT["prctl"], [Fiddle::TYPE_INT, Fiddle::TYPE_LONG, Fiddle::TYPE_LONG,
                                                          Fiddle::TYPE_LONG, Fiddle::TYPE_LONG], Fiddle::TYPE_INT)
rescue LoadError, StandardError
  nil
end

def prctl(option, arg)
  PRCTL&.call(option, arg, 0, 0, 0)
end

def error_text(e)
  "#{e.class}: #{e.message}"
end

# The length of what an op read: a value's bytes, or a ping-pong's count
# of bytes read back; -1 for none.
def size_of(v)
  return v if v.is_a?(Integer)

  v.nil? ? -1 : v.to_s.bytesize
end

def check(v, want)
  n = size_of(v)
  return nil if n == want

  v.nil? ? "no value" : "value of #{n} bytes, want #{want}"
end

# The connect scenario's op: a connection of its own, opened with the open
# message o less its token (unnamed, as an application opens one), the
# lookup on it and its close, timed as one op (as dbsock's Go client times
# it).
def reconnecting(lib, o)
  unnamed = o.merge("token" => "")
  lambda do |_c, key|
    begin
      c, = lib.connect(unnamed)
    ensure
      Backends.remove_temp # a TLS open's CA file
    end
    begin
      lib.lookup(c, key)
    ensure
      c.close
    end
  end
end

# The op of a block or a load of scenario ("" or "connect") on the
# connection opened with the open message o.
def op_for(lib, scenario, o)
  return reconnecting(lib, o) if scenario == "connect"
  raise ArgumentError, "scenario #{scenario.inspect}: this agent times \"connect\" and lookups on open connections" unless scenario.empty?

  lib.method(:lookup)
end

def block(lib, c, m, o)
  keys, want, warmup = m.fetch("keys"), m.fetch("value_length"), m["warmup"].to_i
  op = op_for(lib, m["scenario"].to_s, o)
  warmup.times { |i| op.call(c, keys[i % keys.size]) }
  ns = Array.new(keys.size, 0)
  errors = []
  keys.each_with_index do |key, i|
    err = nil
    t0 = clock
    begin
      v = op.call(c, key)
    rescue StandardError => e # the op's error, reported for that op
      v, err = nil, error_text(e)
    end
    ns[i] = clock - t0
    err ||= check(v, want)
    errors << { "index" => i, "message" => err[0, 500] } if err
  end
  { "type" => "block_result", "id" => m["id"], "ns" => ns, "errors" => errors }
end

def overhead(n)
  empty = ->(_c, _key) {}
  Array.new(n) do
    t0 = clock
    empty.call(nil, nil)
    clock - t0
  end
end

# A load's untimed ops on one connection, closed loop.
def warm(lib, c, part, o)
  keys, op = part["keys"], op_for(lib, part["scenario"], o)
  part["warmup"].times { |i| op.call(c, keys[i % keys.size]) }
end

# Waits until t (on clock) in sleeps: one sleep, another if it woke early.
# The time it starts at.
def sleep_until(t)
  now = clock
  while now < t
    sleep((t - now) / 1e9)
    now = clock
  end
  now
end

# One connection's part of a load from T0 (on clock): closed loop, or each
# op started at its due time (or when the op before it ends, if later).
# Nothing but the ops, their timing and keeping the numbers in
# preallocated arrays.
def run_load(lib, c, part, t0, o)
  keys, want, interval, n = part["keys"], part["value_length"], part["interval_ns"], part["n"]
  nkeys = keys.size
  finish = part["duration_ns"].positive? ? t0 + part["duration_ns"] : nil
  ns = Array.new(n, 0)
  lags = interval.positive? ? Array.new(n, 0) : nil
  errors = []
  op = op_for(lib, part["scenario"], o)
  fails = j = 0
  prctl(PR_SET_TIMERSLACK, 1) # this thread's sleeps end within a µs of their time, not the default 50 µs
  due = t0 + part["offset_ns"]
  start = sleep_until(t0) unless interval.positive? # every connection starts at T0
  while j < n
    if interval.positive?
      break if finish && due >= finish

      start = sleep_until(due)
    else
      start = clock
      break if finish && start >= finish
    end
    err = nil
    begin
      v = op.call(c, keys[j % nkeys])
    rescue StandardError => e # the op's error, reported for that op
      v, err = nil, error_text(e)
    end
    ns[j] = clock - start
    if lags
      lags[j] = start - due
      due += interval
    end
    err ||= check(v, want)
    j += 1
    if err
      errors << { "index" => j - 1, "message" => err[0, 500] }
      fails += 1
      break if fails >= MAX_FAILS
    else
      fails = 0
    end
  end
  r = { "id" => part["id"], "ns" => j < n ? ns[0, j] : ns, "errors" => errors }
  r["lag_ns"] = j < n ? lags[0, j] : lags if lags
  r
end

# A worker: the one connection it opens, until its close (or the end of
# its channel). Requests: open, block, close as dbsock sends them; a
# load's part as warm (answered ready), then go with T0 (answered with its
# ops) or cancel (no answer).
def work(lib, take, put)
  c = o = nil # the connection, and the open message it was opened with
  loop do
    m = take.call
    return if m.nil?

    begin
      case m["type"]
      when "open"
        begin
          c, info = lib.connect(m)
        ensure
          Backends.remove_temp # the CA is read when connecting: none is left on disk, however the agent ends
        end
        o = m
        put.call({ "type" => "opened", "id" => m["id"] }.merge(info))
      when "block"
        put.call(block(lib, c, m, o))
      when "warm"
        warm(lib, c, m, o)
        put.call({ "type" => "ready" })
        go = take.call
        return if go.nil?

        put.call({ "type" => "part", "result" => run_load(lib, c, m, go["t0"], o) }) if go["type"] == "go"
      when "close"
        cc, c = c, nil
        cc.close
        put.call({ "type" => "closed", "id" => m["id"] })
        return
      else
        put.call({ "type" => "error", "message" => "the worker got an unknown request #{m['type'].inspect}" })
      end
    rescue StandardError => e
      put.call({ "type" => "error", "id" => m["id"].to_s, "message" => error_text(e) })
    end
  end
ensure
  begin
    c&.close
  rescue StandardError
    nil
  end
end

# The agent's process: answers dbsock's requests, each connection's in
# its worker.
class Agent
  GONE = [IOError, SystemCallError].freeze

  def initialize(lib, model)
    @lib, @model, @workers = lib, model, {}
    @families = { lib.family => lib } # an open's family: the library that speaks it
  end

  # Sends a worker a request and returns its answer; a worker that ended
  # is dropped, and its end is the error.
  def ask(w, m)
    a = begin
      w.put(m)
      w.take
    rescue *GONE
      nil
    end
    if a.nil?
      @workers.delete(w.cid)
      raise IOError, "connection #{w.cid}: #{w.gone}"
    end
    a
  end

  def open(m)
    cid = m["id"]
    raise ArgumentError, "an open needs an id (a string that names the connection)" unless cid.is_a?(String) && !cid.empty?

    family = m["family"] # protocol 1: none, the library the agent was started with
    lib = family.nil? ? @lib : @families[family]
    if lib.nil?
      raise ArgumentError, "this agent speaks #{@lib.family} with #{@lib.name}, not family #{family.inspect}: start one for that family's target"
    end
    raise ArgumentError, "connection #{cid} is open already: close it first, or open another id" if @workers.key?(cid)
    raise ArgumentError, "#{MAX_WORKERS} connections are open, the most this agent keeps: close some first" if @workers.size >= MAX_WORKERS

    w = (@model == "processes" ? ProcessWorker : ThreadWorker).new(lib, cid, @workers)
    @workers[cid] = w
    a = ask(w, m)
    if a["type"] != "opened" # the worker has no connection: it goes
      @workers.delete(cid)
      w.finish(1.0)
    end
    a
  end

  def worker(cid)
    @workers[cid] or raise KeyError, "no connection #{cid} is open: open it first"
  end

  def close(m)
    w = worker(m["id"])
    a = ask(w, m)
    @workers.delete(m["id"])
    w.finish(1.0)
    a
  end

  def int(m, name)
    v = m[name] || 0
    raise ArgumentError, "the load's #{name} is #{v.inspect}, not an integer" unless v.is_a?(Integer)

    v
  end

  # Each connection's part of a load, checked before any starts.
  def parts(m)
    ids, keys = m["ids"] || [], m["keys"] || []
    interval, duration, max_ops, warmup = int(m, "interval_ns"), int(m, "duration_ns"), int(m, "max_ops"), int(m, "warmup")
    offsets = m["offsets_ns"] || Array.new(ids.size, 0)
    raise ArgumentError, "the load names no connection" if ids.empty?
    if ids.size > MAX_CONNECTIONS
      raise ArgumentError, "the load has #{ids.size} connections, over the #{MAX_CONNECTIONS} this agent runs at once (its hello's max_connections)"
    end
    raise ArgumentError, "the load names a connection twice" if ids.uniq.size != ids.size
    if keys.size != ids.size || offsets.size != ids.size
      raise ArgumentError, "the load has #{ids.size} ids, #{keys.size} key lists and #{offsets.size} offsets: one each per connection"
    end
    if [interval, duration, max_ops, warmup].any?(&:negative?) || !offsets.all? { |x| x.is_a?(Integer) && !x.negative? }
      raise ArgumentError, "the load's interval_ns, duration_ns, max_ops, warmup and offsets_ns must be integers >= 0"
    end
    if duration.positive? && max_ops.zero? && interval.zero?
      raise ArgumentError, "a closed-loop load with duration_ns needs max_ops > 0 (the ops each connection may do)"
    end

    parts = ids.zip(keys, offsets).map do |cid, k, off|
      worker(cid)
      raise ArgumentError, "connection #{cid}'s keys are not a list" unless k.is_a?(Array)

      if duration.zero?
        n = k.size
      else
        raise ArgumentError, "connection #{cid} has no keys in the load" if k.empty?

        n = max_ops
        if interval.positive?
          due = [0, -(-(duration - off) / interval)].max # due times before T0 + duration_ns
          n = max_ops.zero? ? due : [max_ops, due].min
        end
      end
      { "type" => "warm", "id" => cid, "keys" => k, "warmup" => k.empty? ? 0 : warmup, "value_length" => m["value_length"],
        "interval_ns" => interval, "offset_ns" => off, "duration_ns" => duration, "n" => n, "scenario" => m["scenario"].to_s }
    end
    raise ArgumentError, "the load has over #{MAX_LOAD_OPS} ops: split it" if parts.sum { |p| p["n"] } > MAX_LOAD_OPS

    parts
  end

  def load(m)
    parts = parts(m)
    ws = parts.map { |p| @workers[p["id"]] }
    # Each worker warms its connection up, all at once, and says it is
    # ready; then all get T0, a few ms ahead on the one monotonic clock,
    # and sleep until it: none is woken in the timed window.
    sent, failed = [], nil
    ws.zip(parts).each do |w, p|
      w.put(p)
      sent << w
    rescue *GONE
      failed ||= "connection #{w.cid}: #{w.gone}"
      @workers.delete(w.cid)
    end
    ready, failed = answers(sent, "ready", "'s warm-up", failed)
    if failed
      ready.each { |w, _| w.put({ "type" => "cancel" }) }
      raise IOError, "the load did not start: #{failed}"
    end
    t0 = clock + 5_000_000 + 500_000 * ws.size # time for every worker to be woken and asleep again before T0, on a busy machine too
    ws.each { |w| w.put({ "type" => "go", "t0" => t0 }) }
    got, failed = answers(ws, "part", "", nil)
    raise IOError, "the load failed: #{failed}" if failed

    { "type" => "load_result", "results" => got.map { |_, a| a["result"] } }
  end

  # Reads one answer from each of ws: the [worker, answer] pairs of type
  # want, and the first failure (failed, if already one).
  def answers(ws, want, what, failed)
    got = []
    ws.each do |w|
      a = begin
        w.take
      rescue *GONE
        nil
      end
      if a.nil?
        failed ||= "connection #{w.cid}: #{w.gone}"
        @workers.delete(w.cid)
      elsif a["type"] != want
        failed ||= "connection #{w.cid}#{what}: #{a['message'] || a}"
      else
        got << [w, a]
      end
    end
    [got, failed]
  end

  # Ends every worker: each channel closed, then each waited for (killed
  # after a second).
  def finish
    ws = @workers.values
    @workers = {}
    deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + 1.0
    ws.each(&:stop)
    ws.each { |w| w.finish([0.0, deadline - Process.clock_gettime(Process::CLOCK_MONOTONIC)].max) }
  end

  def answer(m)
    case m["type"]
    when "open" then open(m)
    when "block" then ask(worker(m["id"]), m)
    when "load" then load(m)
    when "overhead" then { "type" => "overhead_result", "ns" => overhead(Integer(m["n"])) }
    when "close" then close(m)
    else { "type" => "error", "message" => "unknown message type #{m['type'].inspect}" }
    end
  end

  def serve(input, out)
    input.each_line do |line|
      next if line.strip.empty? # not a request: nothing to answer
      m = nil
      reply = begin
        m = JSON.parse(line)
        raise ArgumentError, "a request is a JSON object, not #{line.strip[0, 40].inspect}" unless m.is_a?(Hash)

        answer(m)
      rescue StandardError => e
        cid = m.is_a?(Hash) ? (m["id"] || (m["ids"].is_a?(Array) && m["ids"].first) || "") : ""
        { "type" => "error", "id" => cid.to_s, "message" => error_text(e) }
      end
      out.write(JSON.generate(reply), "\n")
      out.flush
    end
  end
end

USAGE = "usage: agent.rb [--workers processes|threads] FAMILY [LIBRARY]"

# usage exits 2 (a bad command line, as every stack's agent does) with why.
def usage(why)
  warn why
  exit 2
end

# backend is the backend of protocol family with library name, the
# family's default when name is empty.
def backend(family, name)
  libs = Backends::FAMILIES[family] or usage "agent.rb: no protocol family #{family.inspect} (#{Backends::FAMILIES.keys.join(', ')})\n#{USAGE}"
  name = libs.first if name.to_s.empty?
  libs.include?(name) or usage "agent.rb: no library #{name.inspect} for protocol family #{family} (it has #{libs.join(', ')})\n#{USAGE}"
  Backends::LIBRARIES.fetch(name).call
end

def main(args)
  model = "processes"
  if args.first.to_s.start_with?("--workers")
    if args.first == "--workers" && args.size > 1
      model, args = args[1], args[2..]
    elsif args.first.start_with?("--workers=")
      model, args = args.first.split("=", 2)[1], args[1..]
    else
      usage USAGE
    end
    usage "agent.rb: --workers #{model.inspect}: the models are processes and threads\n#{USAGE}" unless %w[processes threads].include?(model)
  end
  usage USAGE unless [1, 2].include?(args.size)
  lib = backend(args[0], args[1])
  caps = { "families" => [lib.family], "tls" => lib.tls, "workers" => model, "open_loop" => true,
           "max_connections" => MAX_CONNECTIONS, "connect" => true }
  hello = { "type" => "hello", "protocol" => 2, "language" => "ruby", "runtime_version" => RUBY_VERSION,
            "library" => lib.name, "library_version" => lib.version, "capabilities" => caps }
  hello["mode"] = lib.mode if lib.mode
  hello["unprepared_mode"] = lib.unprepared_mode if lib.respond_to?(:unprepared_mode)
  $stdout.write(JSON.generate(hello), "\n")
  $stdout.flush
  agent = Agent.new(lib, model)
  begin
    agent.serve($stdin, $stdout)
  ensure
    agent.finish
    Backends.remove_temp
  end
end

main(ARGV.dup) if $PROGRAM_NAME == __FILE__
