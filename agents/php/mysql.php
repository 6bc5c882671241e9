<?php
// The PHP agent's mysql family (agent.php loads it): mysqli (mysqlnd), the
// lookup a prepared statement, once per connection.
// Each library: its version and mode, and how it connects, looks a key up
// and disconnects; agent.php does the rest.

return [
    'mysqli' => [
        'version' => fn() => phpversion('mysqli') . ' (mysqlnd ' . (explode(' ', mysqli_get_client_info())[1] ?? '?') . ')',
        'mode' => ['mode' => 'prepared'],
        'tls' => true,
        'connect' => function (array $o): array {
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
            $id = null;
            if (($o['token'] ?? '') !== '') { // none: a connect scenario's op opens unnamed
                $s = $m->prepare('SELECT GET_LOCK(?, 0), CONNECTION_ID()'); // the token the server shows: a user lock
                $s->bind_param('s', $o['token']);
                $s->execute();
                $s->bind_result($locked, $id);
                $s->fetch();
                $s->close();
            }
            $key = new stdClass(); // the statement's parameter, bound once by reference
            $key->v = 0;
            $st = $m->prepare($o['statement']); // once per connection
            $st->bind_param('i', $key->v);
            return [[$m, $st, $key], $id];
        },
        'lookup' => function ($c, $key) {
            $c[2]->v = $key;
            $c[1]->execute();
            $c[1]->bind_result($v);
            $found = $c[1]->fetch();
            $c[1]->free_result();
            return $found ? $v : null;
        },
        'disconnect' => function ($c) { $c[1]->close(); $c[0]->close(); },
    ],
];
