"""The Python agent's workers (agent.py): each connection's in a thread
of the agent's process or in a process forked from it, running the
agent's work function on its requests. No database or library here."""
import ctypes
import os
import pickle
import queue
import signal
import socket
import struct
import sys
import threading
import time

LIBC = ctypes.CDLL(None, use_errno=True) if sys.platform.startswith("linux") else None  # for prctl


def prctl(option, arg):
    """prctl(2) on Linux; nothing elsewhere."""
    if LIBC is not None:
        LIBC.prctl(option, arg, 0, 0, 0)


PR_SET_PDEATHSIG, PR_SET_TIMERSLACK = 1, 29


class ThreadWorker:
    """A connection's worker as a thread of the agent's process."""

    def __init__(self, work, lib, cid, workers):
        self.cid, self.requests, self.answers = cid, queue.Queue(), queue.Queue()
        self.thread = threading.Thread(target=work, args=(lib, self.requests.get, self.answers.put),
                                       name="dbsock-" + cid[:40], daemon=True)
        self.thread.start()

    def send(self, m):
        self.requests.put(m)

    def recv(self):
        return self.answers.get()

    def end(self, wait):
        self.requests.put(None)
        self.thread.join(wait)

    def gone(self):
        return "its worker thread ended"


class ProcessWorker:
    """A connection's worker as a process forked from the agent's, talking
    with it over a socket pair: each message a length (8 bytes) and a
    pickle. The worker dies with the agent: the kernel sends it SIGKILL
    when the agent's process ends (PR_SET_PDEATHSIG), and it exits at the
    end of its channel, which no other process holds open."""

    MAX_MESSAGE = 1 << 30

    def __init__(self, work, lib, cid, workers):
        self.cid, self.status = cid, None
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        parent = os.getpid()
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # the worker
            code = 0
            try:
                prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
                if os.getppid() != parent:  # the agent ended before the worker could ask to end with it
                    os._exit(1)
                mine.close()
                for w in workers.values():  # the other workers' channels stay only with the agent
                    w.sock.close()
                null = os.open(os.devnull, os.O_RDONLY)
                os.dup2(null, 0)  # only the agent reads dbsock's requests and writes its answers
                os.dup2(2, 1)
                os.close(null)
                self.sock = theirs
                work(lib, self.recv, self.send)
            except BaseException:
                code = 1
                try:
                    import traceback
                    traceback.print_exc()
                    sys.stderr.flush()
                except BaseException:
                    pass
            finally:
                os._exit(code)
        theirs.close()
        self.pid, self.sock = pid, mine

    def send(self, m):
        b = pickle.dumps(m, pickle.HIGHEST_PROTOCOL)
        self.sock.sendall(struct.pack("<Q", len(b)) + b)

    def read(self, n):
        buf, got = bytearray(n), 0
        view = memoryview(buf)
        while got < n:
            r = self.sock.recv_into(view[got:])
            if r == 0:
                return None
            got += r
        return buf

    def recv(self):
        """The next message, or None at the channel's end (the other side
        ended)."""
        head = self.read(8)
        if head is None:
            return None
        n = struct.unpack("<Q", head)[0]
        if n > self.MAX_MESSAGE:
            raise ValueError("a message of %d bytes on a worker's channel, over %d" % (n, self.MAX_MESSAGE))
        body = self.read(n)
        return None if body is None else pickle.loads(body)

    def reap(self, wait):
        """Waits up to wait seconds for the worker to exit, then kills it."""
        if self.status is not None:
            return
        deadline = time.monotonic() + wait
        while True:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.status = status
                return
            if time.monotonic() >= deadline:
                break
            time.sleep(0.002)
        os.kill(self.pid, signal.SIGKILL)
        self.status = os.waitpid(self.pid, 0)[1]

    def end(self, wait):
        self.sock.close()
        self.reap(wait)

    def gone(self):
        self.end(0.5)
        if os.WIFSIGNALED(self.status):
            how = "was killed by signal %d" % os.WTERMSIG(self.status)
        else:
            how = "exited with status %d" % os.WEXITSTATUS(self.status)
        return "its worker process %d %s (its stderr is the agent's)" % (self.pid, how)
