<?php
// The PHP agent's postgres family (agent.php loads it; PgBouncer speaks it
// too): pgsql, the lookup prepared once per connection with pg_prepare, or
// sent with pg_query_params where the connection may not prepare it.
// Each library: its version and mode, and how it connects, looks a key up
// and disconnects; agent.php does the rest.

return [
    'pgsql' => [
        'version' => fn() => phpversion('pgsql'),
        'mode' => ['mode' => 'prepared', 'unprepared_mode' => 'exec'],
        'tls' => true,
        'connect' => function (array $o): array {
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
            return [[$c, $prepare ? null : $o['statement']], pg_get_pid($c)];
        },
        'lookup' => function ($conn, $key) {
            [$c, $unprepared] = $conn;
            $r = $unprepared === null ? pg_execute($c, 'dbsock_lookup', [$key]) : pg_query_params($c, $unprepared, [$key]);
            if ($r === false) {
                throw new Exception(pg_last_error($c));
            }
            $v = pg_fetch_result($r, 0, 0);
            return $v === false ? null : $v;
        },
        'disconnect' => function ($conn) { pg_close($conn[0]); },
    ],
];
