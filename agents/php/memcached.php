<?php
// The PHP agent's memcached family (agent.php loads it): the memcached
// extension (libmemcached), which has no TLS.
// Each library: its version and mode, and how it connects, looks a key up
// and disconnects; agent.php does the rest.

return [
    'memcached' => [
        'version' => fn() => phpversion('memcached') . sprintf(' (libmemcached 0x%08x)', Memcached::LIBMEMCACHED_VERSION_HEX),
        'mode' => [],
        'tls' => false,
        'connect' => function (array $o): array {
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
            return [$m, null];
        },
        'lookup' => function ($m, $key) {
            $v = $m->get((string)$key);
            if ($v === false && $m->getResultCode() !== Memcached::RES_NOTFOUND) {
                throw new Exception($m->getResultMessage());
            }
            return $v === false ? null : $v;
        },
        'disconnect' => function ($m) { $m->quit(); },
    ],
];
