<?php
// The PHP agent's redis family (agent.php loads it): phpredis.
// Each library: its version and mode, and how it connects, looks a key up
// and disconnects; agent.php does the rest.

return [
    'phpredis' => [
        'version' => fn() => phpversion('redis'),
        'mode' => ['mode' => 'resp2'],
        'tls' => true,
        'connect' => function (array $o): array {
            $r = new Redis();
            $ctx = empty($o['tls_ca_pem']) ? null : ['stream' => ['cafile' => ca_file($o), 'verify_peer_name' => false]];
            $host = is_unix($o) ? $o['socket'] : (empty($o['tls_ca_pem']) ? $o['host'] : 'tls://' . $o['host']);
            $args = [$host, is_unix($o) ? 0 : $o['port'], timeout($o), null, 0, timeout($o)];
            $r->connect(...($ctx === null ? $args : [...$args, $ctx]));
            if (!empty($o['password'])) {
                $r->auth(empty($o['user']) ? $o['password'] : [$o['user'], $o['password']]);
            }
            if (($o['token'] ?? '') !== '') { // none: a connect scenario's op opens unnamed
                $r->client('setname', $o['token']);
            }
            return [$r, null];
        },
        'lookup' => function ($r, $key) {
            $v = $r->get((string)$key);
            return $v === false ? null : $v;
        },
        'disconnect' => function ($r) { $r->close(); },
    ],
];
