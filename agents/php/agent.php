<?php
// dbsock's PHP agent (docs/agents.md): php agent.php TARGET [LIBRARY].
//
// Opens connections with one PHP extension (redis: phpredis; postgres and
// pgbouncer: pgsql; mysql: mysqli; memcached: memcached), times each lookup of a block
// on hrtime() (a monotonic clock, in nanoseconds), checks each value's
// length and returns each op's latency. Nothing else.

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

// Each back end: [library, version, open(o): [conn, info], op(conn, key): ?string, close(conn)].
function backend(string $target, string $lib): array {
    switch ("$target:$lib") {
    case 'redis:': case 'redis:phpredis':
        return ['phpredis', phpversion('redis'), function (array $o) {
            $r = new Redis();
            $ctx = empty($o['tls_ca_pem']) ? null : ['stream' => ['cafile' => ca_file($o), 'verify_peer_name' => false]];
            $host = is_unix($o) ? $o['socket'] : (empty($o['tls_ca_pem']) ? $o['host'] : 'tls://' . $o['host']);
            $args = [$host, is_unix($o) ? 0 : $o['port'], timeout($o), null, 0, timeout($o)];
            $r->connect(...($ctx === null ? $args : [...$args, $ctx]));
            if (!empty($o['password'])) {
                $r->auth(empty($o['user']) ? $o['password'] : [$o['user'], $o['password']]);
            }
            $r->client('setname', $o['token']);
            return [$r, []];
        }, function ($r, $key) { $v = $r->get((string)$key); return $v === false ? null : $v; },
        function ($r) { $r->close(); }];
    case 'postgres:': case 'postgres:pgsql': case 'pgbouncer:': case 'pgbouncer:pgsql':
        return ['pgsql', phpversion('pgsql'), function (array $o) {
            $q = fn($s) => "'" . addcslashes((string)$s, "'\\") . "'";
            if (is_unix($o)) { // libpq takes the socket's directory and the port its name ends with
                $host = dirname($o['socket']);
                $port = substr(strrchr($o['socket'], '.'), 1);
            } else {
                [$host, $port] = [$o['host'], $o['port']];
            }
            $tls = empty($o['tls_ca_pem']) ? 'sslmode=disable' : 'sslmode=verify-ca sslrootcert=' . $q(ca_file($o));
            $c = pg_connect(sprintf('host=%s port=%s user=%s password=%s dbname=%s application_name=%s connect_timeout=%d %s',
                $q($host), $q($port), $q($o['user']), $q($o['password']), $q($o['database']), $q($o['token']),
                max(1, (int)timeout($o)), $tls), PGSQL_CONNECT_FORCE_NEW);
            if ($c === false) {
                throw new Exception('pg_connect failed');
            }
            $prepare = empty($o['no_prepare']); // a pooler in transaction pooling cannot keep a prepared statement
            if ($prepare && pg_prepare($c, 'dbsock_lookup', $o['statement']) === false) { // once per connection
                throw new Exception('prepare: ' . pg_last_error($c));
            }
            return [[$c, $prepare ? null : $o['statement']], ['conn_id' => pg_get_pid($c)]];
        }, function ($conn, $key) {
            [$c, $unprepared] = $conn;
            $r = $unprepared === null ? pg_execute($c, 'dbsock_lookup', [$key]) : pg_query_params($c, $unprepared, [$key]);
            if ($r === false) {
                throw new Exception(pg_last_error($c));
            }
            $v = pg_fetch_result($r, 0, 0);
            return $v === false ? null : $v;
        }, function ($conn) { pg_close($conn[0]); }];
    case 'mysql:': case 'mysql:mysqli':
        return ['mysqli', phpversion('mysqli') . ' (mysqlnd ' . (explode(' ', mysqli_get_client_info())[1] ?? '?') . ')', function (array $o) {
            mysqli_report(MYSQLI_REPORT_ERROR | MYSQLI_REPORT_STRICT);
            $m = mysqli_init();
            $m->options(MYSQLI_OPT_CONNECT_TIMEOUT, max(1, (int)timeout($o)));
            $m->options(MYSQLI_OPT_READ_TIMEOUT, max(1, (int)timeout($o)));
            $flags = 0;
            if (!empty($o['tls_ca_pem'])) {
                $m->ssl_set(null, null, ca_file($o), null, null);
                $flags = MYSQLI_CLIENT_SSL;
            }
            $host = str_contains($o['host'] ?? '', ':') ? '[' . $o['host'] . ']' : ($o['host'] ?? ''); // mysqlnd takes [::1]
            $m->real_connect(is_unix($o) ? 'localhost' : $host, $o['user'], $o['password'], $o['database'],
                is_unix($o) ? 0 : $o['port'], is_unix($o) ? $o['socket'] : null, $flags);
            $s = $m->prepare('SELECT GET_LOCK(?, 0), CONNECTION_ID()'); // the token the server shows: a user lock
            $s->bind_param('s', $o['token']);
            $s->execute();
            $s->bind_result($locked, $id);
            $s->fetch();
            $s->close();
            $st = $m->prepare($o['statement']); // once per connection
            $st->bind_param('i', $GLOBALS['mysqli_key']);
            return [[$m, $st], ['conn_id' => $id]];
        }, function ($c, $key) {
            $GLOBALS['mysqli_key'] = $key;
            $c[1]->execute();
            $c[1]->bind_result($v);
            $found = $c[1]->fetch();
            $c[1]->free_result();
            return $found ? $v : null;
        }, function ($c) { $c[1]->close(); $c[0]->close(); }];
    case 'memcached:': case 'memcached:memcached':
        return ['memcached', phpversion('memcached') . sprintf(' (libmemcached 0x%08x)', Memcached::LIBMEMCACHED_VERSION_HEX), function (array $o) {
            if (!empty($o['tls_ca_pem'])) {
                throw new Exception('the memcached extension has no TLS');
            }
            $m = new Memcached();
            $m->setOption(Memcached::OPT_COMPRESSION, false);
            $m->setOption(Memcached::OPT_TCP_NODELAY, true);
            $m->setOption(Memcached::OPT_CONNECT_TIMEOUT, $o['op_timeout_ms']);
            $m->setOption(Memcached::OPT_POLL_TIMEOUT, $o['op_timeout_ms']);
            $m->addServer(is_unix($o) ? $o['socket'] : $o['host'], is_unix($o) ? 0 : $o['port']);
            if (!empty($o['password']) && !$m->set('auth', $o['user'] . ' ' . $o['password'])) {
                // memcached's text-protocol authentication (-Y): a set of "user password"
                throw new Exception('authenticate: ' . $m->getResultMessage());
            }
            if ($m->getVersion() === false) { // connected now, so that dbsock sees the connection
                throw new Exception('connect: ' . $m->getResultMessage());
            }
            return [$m, []];
        }, function ($m, $key) {
            $v = $m->get((string)$key);
            if ($v === false && $m->getResultCode() !== Memcached::RES_NOTFOUND) {
                throw new Exception($m->getResultMessage());
            }
            return $v === false ? null : $v;
        }, function ($m) { $m->quit(); }];
    }
    fwrite(STDERR, "agent.php: no library '$lib' for target '$target'\n");
    exit(2);
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

function say(array $m): void {
    fwrite(STDOUT, json_encode($m, JSON_UNESCAPED_SLASHES) . "\n");
    fflush(STDOUT);
}

$temp = [];
if ($argc < 2 || $argc > 3) {
    fwrite(STDERR, "usage: agent.php TARGET [LIBRARY]\n");
    exit(2);
}
[$library, $version, $open, $op, $close] = backend($argv[1], $argv[2] ?? '');
say(['type' => 'hello', 'protocol' => 1, 'language' => 'php', 'runtime_version' => PHP_VERSION,
    'library' => $library, 'library_version' => (string)$version]
    + (['phpredis' => ['mode' => 'resp2'], 'pgsql' => ['mode' => 'prepared', 'unprepared_mode' => 'exec'], 'mysqli' => ['mode' => 'prepared']][$library] ?? []));
$conns = [];
while (($line = fgets(STDIN)) !== false) {
    $m = json_decode($line, true);
    $id = $m['id'] ?? '';
    try {
        switch ($m['type'] ?? '') {
        case 'open':
            try {
                [$c, $info] = $open($m);
            } finally {
                remove_temp(); // the CA is read when connecting: none is left on disk, however the agent ends
            }
            $conns[$id] = $c;
            say(['type' => 'opened', 'id' => $id] + $info);
            break;
        case 'block':
            say(block($op, $conns[$id], $m));
            break;
        case 'overhead':
            say(overhead($m['n']));
            break;
        case 'close':
            $close($conns[$id]);
            unset($conns[$id]);
            say(['type' => 'closed', 'id' => $id]);
            break;
        default:
            say(['type' => 'error', 'id' => $id, 'message' => 'unknown message type']);
        }
    } catch (Throwable $e) {
        say(['type' => 'error', 'id' => $id, 'message' => get_class($e) . ': ' . $e->getMessage()]);
    }
}
remove_temp();
