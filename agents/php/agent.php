<?php
// dbsock's PHP agent (docs/agents.md): php agent.php FAMILY [LIBRARY].
//
// Opens connections with one PHP extension, the backend LIBRARY (its
// first, by default) of the file FAMILY.php beside this one (redis.php:
// phpredis; postgres.php: pgsql; mysql.php: mysqli; memcached.php:
// memcached), times each lookup of a block on hrtime() (a monotonic clock,
// in nanoseconds), checks each value's length and returns each op's
// latency. Nothing else. This file names no database and no library: a
// backend only connects, looks a key up, disconnects and says its version
// and mode.
//
// Protocol 2: as PHP-FPM runs an application, a process per connection.
// Each open forks a worker (a child of this process, talking to it over a
// socket pair) that opens the connection itself and keeps it until its
// close; this process forwards the requests and answers. A worker that
// reads the end of its socket (this process closed it, or died) exits.
// A load hands each worker its part; each warms up, then all wait, asleep,
// for one moment T0 on CLOCK_MONOTONIC (hrtime, shared by every process),
// run their ops (closed loop, or paced by sleeping to each op's due time)
// into preallocated arrays, and return them once every worker is done.

ini_set('display_errors', 'stderr'); // stdout carries the protocol only

// ca_file writes the open $o's CA to a temporary file, for a backend whose library reads it from one; its path.
function ca_file(array $o): string {
    $path = tempnam(sys_get_temp_dir(), 'dbsock-ca-');
    file_put_contents($path, $o['tls_ca_pem']);
    $GLOBALS['temp'][] = $path;
    return $path;
}

// remove_temp removes the temporary files ca_file wrote.
function remove_temp(): void {
    foreach ($GLOBALS['temp'] as $path) {
        @unlink($path);
    }
    $GLOBALS['temp'] = [];
}

function is_unix(array $o): bool { return $o['network'] === 'unix'; }

function timeout(array $o): float { return $o['op_timeout_ms'] / 1000; }

// backend is library $lib ('' for the first, the default) of $family's backends, the file FAMILY.php beside
// this one: its name and its functions, connect(o): [conn, the server's id of it or null], lookup(conn, key):
// ?string, disconnect(conn), version(): string, and mode (the hello's mode fields) and tls. It exits 2 when
// there is none.
function backend(string $family, string $lib): array {
    $file = __DIR__ . "/$family.php";
    if (preg_match('/^[a-z0-9_-]+$/', $family) !== 1 || !is_file($file) || $file === __FILE__) {
        fwrite(STDERR, sprintf("agent.php: this agent has no backend for family %s (%s has none): give a family it has a %s.php for\n",
            json_encode($family), $file, __DIR__ . '/FAMILY'));
        exit(2);
    }
    $libs = require $file;
    $name = $lib === '' ? array_key_first($libs) : $lib;
    if (!isset($libs[$name])) {
        fwrite(STDERR, sprintf("agent.php: no library %s for family %s: give one of %s\n", json_encode($lib), json_encode($family),
            implode(', ', array_keys($libs))));
        exit(2);
    }
    return [$name, $libs[$name]];
}

// op_for is the op of a block or a load of $scenario ('' or 'connect') on a connection opened with the
// open message $o: in the connect scenario, a connection of its own opened with $o less its token (unnamed,
// as an application opens one), the lookup on it and its close, timed as one op (as dbsock's Go client
// times it).
function op_for(string $scenario, array $o): callable {
    global $open, $op, $close;
    if ($scenario === '') {
        return $op;
    }
    if ($scenario !== 'connect') {
        throw new InvalidArgumentException(sprintf('scenario %s: this agent times "connect" and lookups on open connections', json_encode($scenario)));
    }
    $o['token'] = '';
    return function ($_c, $key) use ($o, $open, $op, $close) {
        try {
            [$c] = $open($o);
        } finally {
            remove_temp(); // a TLS open's CA file
        }
        try {
            return $op($c, $key);
        } finally {
            $close($c);
        }
    };
}

function block(callable $op, $c, array $m): array {
    $keys = $m['keys'];
    $n = count($keys);
    for ($i = 0; $i < $m['warmup']; $i++) {
        $op($c, $keys[$i % $n]);
    }
    $ns = [];
    $errors = [];
    foreach ($keys as $i => $key) {
        $err = null;
        $t0 = hrtime(true);
        try {
            $v = $op($c, $key);
        } catch (Throwable $e) {
            [$v, $err] = [null, get_class($e) . ': ' . $e->getMessage()];
        }
        $ns[] = hrtime(true) - $t0;
        if ($err === null && ($v === null || strlen($v) !== $m['value_length'])) {
            $err = $v === null ? 'no value' : sprintf('value of %d bytes, want %d', strlen($v), $m['value_length']);
        }
        if ($err !== null) {
            $errors[] = ['index' => $i, 'message' => substr($err, 0, 500)];
        }
    }
    return ['type' => 'block_result', 'id' => $m['id'], 'ns' => $ns, 'errors' => $errors];
}

function overhead(int $n): array {
    $empty = function ($c, $key) { return null; };
    $ns = [];
    for ($i = 0; $i < $n; $i++) {
        $t0 = hrtime(true);
        $empty(null, null);
        $ns[] = hrtime(true) - $t0;
    }
    return ['type' => 'overhead_result', 'ns' => $ns];
}

// The timed loop of a load's part, in its worker: from T0, op j on keys[j % len] (closed loop: back to
// back; open loop: at its due time T0 + offset + j*interval, reached by sleeping, or when the op before
// it ends if that is later). Its latencies, lags and errors go into arrays allocated before T0; returns
// [ops done, ns, lag_ns, errors].
function run_load(callable $op, $c, array $p, int $t0): array {
    $keys = $p['keys'];
    $nk = count($keys);
    $vl = $p['value_length'];
    $interval = $p['interval_ns'];
    $due = $t0 + $p['offset_ns'];
    $end = $p['duration_ns'] > 0 ? $t0 + $p['duration_ns'] : PHP_INT_MAX;
    $cap = ops_cap($p, $nk);
    $ns = array_fill(0, $cap, 0);
    $lag = $interval > 0 ? array_fill(0, $cap, 0) : [];
    $errors = [];
    $failed = 0;
    sleep_until($t0);
    for ($j = 0; $j < $cap; $j++) {
        if ($interval > 0) {
            if ($due >= $end) {
                break;
            }
            sleep_until($due);
            $start = hrtime(true);
            $lag[$j] = $start - $due;
            $due += $interval;
        } elseif (($start = hrtime(true)) >= $end) {
            break;
        }
        $err = null;
        try {
            $v = $op($c, $keys[$j % $nk]);
        } catch (Throwable $e) {
            [$v, $err] = [null, get_class($e) . ': ' . $e->getMessage()];
        }
        $ns[$j] = hrtime(true) - $start;
        if ($err === null && ($v === null || strlen($v) !== $vl)) {
            $err = $v === null ? 'no value' : sprintf('value of %d bytes, want %d', strlen($v), $vl);
        }
        if ($err === null) {
            $failed = 0;
            continue;
        }
        $errors[] = ['index' => $j, 'message' => substr($err, 0, 500)];
        if (++$failed === MAX_FAILED_IN_A_ROW) { // the connection is gone: return the ops done
            $j++;
            break;
        }
    }
    return [$j, $ns, $lag, $errors];
}

// ops_cap is the most ops a part may do: its keys, or under a duration max_ops, the ops due before
// the end (open loop), and MAX_OPS.
function ops_cap(array $p, int $nk): int {
    if ($nk === 0 || $p['duration_ns'] <= 0) {
        return $nk;
    }
    $cap = $p['max_ops'] > 0 ? min($p['max_ops'], MAX_OPS) : MAX_OPS;
    if ($p['interval_ns'] > 0) {
        $cap = min($cap, intdiv(max(0, $p['duration_ns'] - $p['offset_ns']) + $p['interval_ns'] - 1, $p['interval_ns']));
    }
    return $cap;
}

// sleep_until sleeps (never spins) until hrtime reaches $t: a sleep ends late by the kernel's timer slack and
// the scheduler's wake-up, which the op's lag then shows.
function sleep_until(int $t): void {
    for ($i = 0; $i < 1000 && ($left = $t - hrtime(true)) > 0; $i++) { // more than one turn only when a signal interrupts it
        time_nanosleep(intdiv($left, 1_000_000_000), $left % 1_000_000_000);
    }
}

// libc is prctl(2) through FFI, where PHP has FFI (its CLI has it unless ffi.enable is off); else null.
function libc(): ?FFI {
    try {
        return FFI::cdef('int prctl(int option, unsigned long a2, unsigned long a3, unsigned long a4, unsigned long a5);');
    } catch (Throwable $e) {
        return null;
    }
}

// timer_slack makes this process's sleeps, and its workers' (a fork inherits it), end within 1 ns of their
// time rather than Linux's default 50 µs (PR_SET_TIMERSLACK). Without FFI, the default slack, which the
// ops' lag shows.
function timer_slack(?FFI $libc): void {
    $libc?->prctl(29, 1, 0, 0, 0);
}

// die_with_parent has the kernel kill this worker when the agent dies (PR_SET_PDEATHSIG), even in the
// middle of a load; without FFI, the worker exits when it next reads its socket's end.
function die_with_parent(?FFI $libc, int $agent): void {
    $libc?->prctl(1, SIGKILL, 0, 0, 0);
    if (posix_getppid() !== $agent) { // the agent died before the prctl
        quit();
    }
}

function enc(array $m): string {
    return json_encode($m, JSON_UNESCAPED_SLASHES | JSON_INVALID_UTF8_SUBSTITUTE);
}

// write_line writes $line and a newline on $s; false when its reader is gone.
function write_line($s, string $line): bool {
    $line .= "\n";
    for ($off = 0, $n = strlen($line); $off < $n; $off += $w) {
        $w = @fwrite($s, $off === 0 ? $line : substr($line, $off));
        if ($w === false || $w === 0) {
            return false;
        }
    }
    return true;
}

// read_line reads a line from $s, without its newline; null at the end of $s, or past MAX_LINE.
function read_line($s): ?string {
    $l = stream_get_line($s, MAX_LINE, "\n");
    return $l === false || strlen($l) >= MAX_LINE ? null : $l;
}

function say(array $m): void {
    write_line(STDOUT, enc($m));
}

function error_reply(string $id, string $message): array {
    return ['type' => 'error', 'id' => $id, 'message' => $message];
}

function thrown(Throwable $e): string {
    return get_class($e) . ': ' . $e->getMessage();
}

// worker is a connection's process, forked at its open: it opens the connection, answers on $s, then
// does what this process forwards it until its close, or until $s ends (this process closed it or died).
function worker($s, array $o): never {
    global $open, $op, $close;
    $id = $o['id'];
    try {
        try {
            [$c, $conn_id] = $open($o);
        } finally {
            remove_temp(); // the CA is read when connecting: none is left on disk, however the agent ends
        }
    } catch (Throwable $e) {
        write_line($s, enc(error_reply($id, thrown($e))));
        quit();
    }
    write_line($s, enc(['type' => 'opened', 'id' => $id] + ($conn_id === null ? [] : ['conn_id' => $conn_id])
        + ['detail' => 'worker process ' . getmypid()]));
    while (($line = read_line($s)) !== null) {
        $m = json_decode($line, true);
        try {
            switch ($m['type'] ?? '') {
            case 'block':
                $reply = enc(block(op_for($m['scenario'] ?? '', $o), $c, $m));
                break;
            case 'load':
                $reply = load_part($s, op_for($m['scenario'] ?? '', $o), $c, $m);
                break;
            case 'close':
                try {
                    $close($c);
                    $reply = enc(['type' => 'closed', 'id' => $id]);
                } catch (Throwable $e) {
                    $reply = enc(error_reply($id, thrown($e)));
                }
                write_line($s, $reply);
                quit();
            default:
                $reply = enc(error_reply($id, 'unknown message type'));
            }
        } catch (Throwable $e) {
            $reply = enc(error_reply($id, thrown($e)));
        }
        if ($reply !== null) {
            write_line($s, $reply);
        }
    }
    try { // this process closed the socket, or died
        $close($c);
    } finally {
        quit();
    }
}

// quit ends a worker at once: a forked PHP's own shutdown takes tens of ms of CPU (it frees, and so
// copies, the memory it shares with this process), which 256 workers ending together would make seconds.
function quit(): never {
    posix_kill(getmypid(), SIGKILL);
    exit(0);
}

// load_part runs a worker's part of a load: its warm-up, then "ready"; on "go T0" its timed ops, then
// "done"; on "send" its result, which it returns. Anything else than "go" or "send" ("abort": another
// worker failed) returns null, no answer.
function load_part($s, callable $op, $c, array $p): ?string {
    $keys = $p['keys'];
    for ($i = 0, $n = count($keys); $i < $p['warmup'] && $n > 0; $i++) {
        $op($c, $keys[$i % $n]); // a failure is the load's error, as in a block
    }
    write_line($s, 'ready');
    $go = read_line($s) ?? quit();
    if (!str_starts_with($go, 'go ')) {
        return null;
    }
    [$done, $ns, $lag, $errors] = run_load($op, $c, $p, (int)substr($go, 3));
    write_line($s, 'done');
    if ((read_line($s) ?? quit()) !== 'send') {
        return null;
    }
    $r = ['id' => $p['id'], 'ns' => array_slice($ns, 0, $done)];
    if ($p['interval_ns'] > 0) {
        $r['lag_ns'] = array_slice($lag, 0, $done);
    }
    return enc($r + ['errors' => $errors]);
}

// spawn forks the worker of connection $o['id'], a child of this process; its socket, or an error.
function spawn(array $o): array {
    global $workers, $libc;
    $agent = getmypid();
    $pair = stream_socket_pair(STREAM_PF_UNIX, STREAM_SOCK_STREAM, STREAM_IPPROTO_IP);
    if ($pair === false) {
        return ['error' => 'a socket pair for its worker process: ' . (error_get_last()['message'] ?? 'failed')];
    }
    $pid = pcntl_fork();
    if ($pid === -1) {
        fclose($pair[0]);
        fclose($pair[1]);
        return ['error' => 'fork its worker process: ' . pcntl_strerror(pcntl_get_last_error())];
    }
    if ($pid === 0) {
        die_with_parent($libc, $agent);
        fclose($pair[0]);
        foreach ($workers as $w) { // the other workers' sockets: each must end when this process does
            fclose($w['s']);
        }
        $workers = [];
        worker($pair[1], $o);
    }
    fclose($pair[1]);
    stream_set_chunk_size($pair[0], 1 << 20);
    return ['pid' => $pid, 's' => $pair[0]];
}

// end_workers closes the sockets of the workers of $ids (each then closes its connection and exits) and
// waits for them, killing those still there after $grace_ms.
function end_workers(array $ids, int $grace_ms = 2000): void {
    global $workers;
    $pids = [];
    foreach ($ids as $id) {
        fclose($workers[$id]['s']);
        $pids[] = $workers[$id]['pid'];
        unset($workers[$id]);
    }
    for ($end = hrtime(true) + $grace_ms * 1_000_000; $pids && hrtime(true) < $end;) {
        $pids = array_filter($pids, fn($pid) => pcntl_waitpid($pid, $status, WNOHANG) === 0);
        if ($pids) {
            usleep(1000);
        }
    }
    foreach ($pids as $pid) {
        posix_kill($pid, SIGKILL);
        pcntl_waitpid($pid, $status);
    }
}

// ask forwards a request's line to connection $id's worker; its answer's line, or null when the worker is gone.
function ask(string $id, string $line): ?string {
    global $workers;
    $s = $workers[$id]['s'];
    return write_line($s, $line) ? read_line($s) : null;
}

// load runs a load over the workers of its connections; the answer's line.
function load(array $m): string {
    global $workers;
    $ids = $m['ids'] ?? null;
    $keys = $m['keys'] ?? null;
    $first = is_array($ids) && is_string($ids[0] ?? null) ? $ids[0] : '';
    $n = is_array($ids) ? count($ids) : 0;
    $interval = $m['interval_ns'] ?? 0;
    $fail = fn(string $why) => enc(error_reply($first, "load: $why"));
    if ($n === 0 || !array_is_list($ids)) {
        return $fail('it names no connections (ids)');
    }
    if ($n > MAX_CONNECTIONS) {
        return $fail(sprintf('%d connections: this agent runs at most %d at once', $n, MAX_CONNECTIONS));
    }
    if (count(array_unique($ids)) !== $n) {
        return $fail('a connection is named twice in its ids');
    }
    foreach ($ids as $id) {
        if (!isset($workers[$id])) {
            return $fail(sprintf('no connection %s is open (open it first)', json_encode($id)));
        }
    }
    if (!is_array($keys) || count($keys) !== $n || count(array_filter($keys, 'is_array')) !== $n) {
        return $fail(sprintf('its keys are not one list per connection (%d connections)', $n));
    }
    if (!is_int($interval) || $interval < 0 || ($interval > 0 && count($m['offsets_ns'] ?? []) !== $n)) {
        return $fail('interval_ns is not a count of nanoseconds, or offsets_ns does not give one per connection');
    }
    $parts = [];
    foreach ($ids as $c => $id) {
        $parts[$id] = ['type' => 'load', 'id' => $id, 'keys' => $keys[$c], 'warmup' => (int)($m['warmup'] ?? 0),
            'value_length' => (int)($m['value_length'] ?? 0), 'interval_ns' => $interval,
            'offset_ns' => (int)($interval > 0 ? $m['offsets_ns'][$c] : 0), 'duration_ns' => (int)($m['duration_ns'] ?? 0),
            'max_ops' => (int)($m['max_ops'] ?? 0), 'scenario' => (string)($m['scenario'] ?? '')];
    }
    // Every worker warms up at once; once all are ready, one T0 a few ms ahead, by which all are asleep
    // waiting for it; after it, no I/O until every worker is done.
    $why = null;
    $gone = [];
    $step = function (array $ids, ?string $say, string $want, string $doing) use (&$why, &$gone, $parts): array {
        global $workers;
        $sent = [];
        foreach ($ids as $id) {
            if (write_line($workers[$id]['s'], $say ?? enc($parts[$id]))) {
                $sent[] = $id;
            } else {
                $gone[] = $id;
                $why ??= "the worker process of connection $id has ended";
            }
        }
        $ok = [];
        foreach ($sent as $id) {
            $l = read_line($workers[$id]['s']);
            if ($l === null) {
                $gone[] = $id;
                $why ??= "the worker process of connection $id ended while $doing";
            } elseif ($want === '{' ? str_starts_with($l, '{"id":') : $l === $want) {
                $ok[$id] = $l;
            } elseif (str_starts_with($l, '{"type":"error"')) { // it failed, and waits for requests again
                $why ??= "connection $id, $doing: " . (json_decode($l, true)['message'] ?? '');
            } else {
                $gone[] = $id;
                $why ??= "connection $id, $doing: its worker process answered " . json_encode(substr($l, 0, 100));
            }
        }
        return $ok;
    };
    $waiting = $step($ids, null, 'ready', 'warming up');
    if ($why === null) {
        $t0 = hrtime(true) + T0_LEAD_NS + $n * T0_LEAD_PER_WORKER_NS;
        $waiting = $step($ids, "go $t0", 'done', 'running its ops');
        if ($why === null) {
            $results = $step($ids, 'send', '{', 'sending its ops');
            $waiting = []; // each answered, or is gone
        }
    }
    if ($why !== null) {
        foreach (array_keys($waiting) as $id) { // back to waiting for requests, with no answer
            write_line($workers[$id]['s'], 'abort');
        }
    }
    if ($gone) {
        end_workers(array_unique($gone));
    }
    if ($why !== null) {
        return $fail($why);
    }
    return '{"type":"load_result","results":[' . implode(',', $results) . ']}';
}

const MAX_LINE = 64 << 20; // a request's or a worker's answer's line: 100,000 ops take a few MB
const MAX_CONNECTIONS = 256;
const MAX_OPS = 100_000; // of one connection in one load (dbsock splits loads at 100,000 ops in all)
const MAX_FAILED_IN_A_ROW = 10;
const T0_LEAD_NS = 2_000_000;
const T0_LEAD_PER_WORKER_NS = 100_000;

$temp = [];
if ($argc < 2 || $argc > 3) {
    fwrite(STDERR, "usage: agent.php FAMILY [LIBRARY]\n");
    exit(2);
}
$family = $argv[1];
[$library, $backend] = backend($family, $argv[2] ?? '');
['connect' => $open, 'lookup' => $op, 'disconnect' => $close] = $backend;
say(['type' => 'hello', 'protocol' => 2, 'language' => 'php', 'runtime_version' => PHP_VERSION,
    'library' => $library, 'library_version' => (string)$backend['version']()]
    + $backend['mode']
    + ['capabilities' => ['families' => [$family], 'tls' => $backend['tls'], 'workers' => 'processes',
        'open_loop' => true, 'max_connections' => MAX_CONNECTIONS, 'connect' => true]]);
$libc = libc();
timer_slack($libc);
$workers = []; // by connection id: its worker process's pid and socket
while (($line = read_line(STDIN)) !== null) {
    $m = json_decode($line, true);
    $id = $m['id'] ?? '';
    $id = is_string($id) ? $id : json_encode($id);
    try {
        switch ($m['type'] ?? '') {
        case 'open':
            $fam = $m['family'] ?? $family; // protocol 1: the family of the target the agent was started for
            if ($fam !== $family) {
                say(error_reply($id, sprintf('this agent speaks %s with %s: it cannot open a connection of family %s',
                    $family, $library, json_encode($fam))));
            } elseif (isset($workers[$id])) {
                say(error_reply($id, "connection $id is open already"));
            } elseif (isset(($w = spawn($m))['error'])) {
                say(error_reply($id, 'open: ' . $w['error']));
            } else {
                $workers[$id] = $w;
                $reply = read_line($w['s']);
                write_line(STDOUT, $reply ?? enc(error_reply($id, 'open: its worker process ended without answering')));
                if ($reply === null || !str_starts_with($reply, '{"type":"opened"')) {
                    end_workers([$id]);
                }
            }
            break;
        case 'block':
        case 'close':
            if (!isset($workers[$id])) {
                say(error_reply($id, "no connection $id is open"));
                break;
            }
            $reply = ask($id, $line);
            write_line(STDOUT, $reply ?? enc(error_reply($id, "the worker process of connection $id has ended")));
            if ($reply === null || $m['type'] === 'close') {
                end_workers([$id]);
            }
            break;
        case 'load':
            write_line(STDOUT, load($m));
            break;
        case 'overhead':
            say(overhead($m['n']));
            break;
        default:
            say(error_reply($id, 'unknown message type'));
        }
    } catch (Throwable $e) {
        say(error_reply($id, thrown($e)));
    }
}
end_workers(array_keys($workers), 500); // dbsock gives the agent 2 s to exit: 256 workers may not all be scheduled by then
