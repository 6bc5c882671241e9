# The Ruby agent's workers, one per connection: a thread of the agent's
# process, or a process of its own (the stack's models). Each runs the
# core's work loop (agent.rb); neither names a database or a library.

# A connection's worker as a thread of the agent's process.
class ThreadWorker
  attr_reader :cid

  def initialize(lib, cid, _workers)
    @cid, @requests, @answers = cid, Queue.new, Queue.new
    @thread = Thread.new do
      work(lib, -> { @requests.pop }, ->(m) { @answers.push(m) })
    rescue Exception => e # rubocop:disable Lint/RescueException
      warn "dbsock-#{cid[0, 40]}: #{e.full_message}"
    ensure
      @answers.push(nil) # its end, to whoever waits for an answer
    end
  end

  def put(m)
    @requests.push(m)
  end

  def take
    @answers.pop
  end

  def stop
    @requests.push(nil)
  end

  def finish(wait)
    stop
    @thread.join(wait)
  end

  def gone
    "its worker thread ended"
  end
end

# A connection's worker as a process forked from the agent's, talking with
# it over a socket pair: each message a length (8 bytes) and a Marshal
# dump. The worker dies with the agent: the kernel sends it SIGKILL when
# the agent's process ends (PR_SET_PDEATHSIG), and it exits at the end of
# its channel, which no other process holds open.
class ProcessWorker
  MAX_MESSAGE = 1 << 30
  attr_reader :cid, :sock

  def initialize(lib, cid, workers)
    @cid, @status = cid, nil
    mine, theirs = UNIXSocket.pair
    parent = Process.pid
    $stdout.flush
    $stderr.flush
    @pid = fork do
      code = 0
      begin
        prctl(PR_SET_PDEATHSIG, 9)
        exit!(1) if Process.ppid != parent # the agent ended before the worker could ask to end with it
        mine.close
        workers.each_value { |w| w.sock.close } # the other workers' channels stay only with the agent
        $stdin.reopen(File::NULL) # only the agent reads dbsock's requests and writes its answers
        $stdout.reopen($stderr)
        @sock = theirs
        work(lib, method(:take), method(:put))
      rescue Exception => e # rubocop:disable Lint/RescueException
        code = 1
        warn e.full_message
      ensure
        $stderr.flush
        exit!(code)
      end
    end
    theirs.close
    @sock = mine
  end

  def put(m)
    b = Marshal.dump(m)
    @sock.write([b.bytesize].pack("Q<"), b)
  end

  # The next message, or nil at the channel's end (the other side ended).
  def take
    head = @sock.read(8)
    return nil if head.nil? || head.bytesize < 8

    n = head.unpack1("Q<")
    raise ArgumentError, "a message of #{n} bytes on a worker's channel, over #{MAX_MESSAGE}" if n > MAX_MESSAGE

    body = @sock.read(n)
    body.nil? || body.bytesize < n ? nil : Marshal.load(body) # rubocop:disable Security/MarshalLoad
  end

  def stop
    @sock.close unless @sock.closed?
  end

  # Waits up to wait seconds for the worker to exit, then kills it.
  def reap(wait)
    return unless @status.nil?

    deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + wait
    loop do
      _, @status = Process.waitpid2(@pid, Process::WNOHANG)
      return unless @status.nil?
      break if Process.clock_gettime(Process::CLOCK_MONOTONIC) >= deadline

      sleep 0.002
    end
    begin
      Process.kill(:KILL, @pid)
    rescue Errno::ESRCH
      nil
    end
    _, @status = Process.waitpid2(@pid)
  end

  def finish(wait)
    stop
    reap(wait)
  end

  def gone
    finish(0.5)
    how = @status.signaled? ? "was killed by signal #{@status.termsig}" : "exited with status #{@status.exitstatus}"
    "its worker process #{@pid} #{how} (its stderr is the agent's)"
  end
end
