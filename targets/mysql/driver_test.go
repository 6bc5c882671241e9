package mysql

import (
	"strings"
	"testing"

	"github.com/dbsock/dbsock/drivers"
)

func TestTransportOfHost(t *testing.T) {
	for host, want := range map[string]drivers.Transport{
		"localhost":       drivers.Unix,
		"127.0.0.1:51234": drivers.TCP,
		"localhost:51234": drivers.TCP,
		"[::1]:3306":      drivers.TCP6,
		"::1:48552":       drivers.TCP6, // MariaDB 10.11's processlist over ::1
		"127.0.0.1:":      drivers.Unix,
	} {
		if got := TransportOfHost(host); got != want {
			t.Errorf("TransportOfHost(%q) = %s, want %s", host, got, want)
		}
	}
}

func TestParseVersion(t *testing.T) {
	tests := []struct {
		version, comment, product, short string
	}{
		{"10.11.19-MariaDB-0+deb12u1", "Debian 12", "MariaDB", "10.11.19"},
		{"8.4.3", "MySQL Community Server - GPL", "MySQL", "8.4.3"},
		{"8.0.36-28", "Percona Server (GPL), Release 28", "Percona Server", "8.0.36"},
	}
	for _, tt := range tests {
		got := ParseVersion(tt.version, tt.comment)
		if got.Product != tt.product || got.Version != tt.short {
			t.Errorf("ParseVersion(%q, %q) = %+v, want %s %s", tt.version, tt.comment, got, tt.product, tt.short)
		}
	}
}

func TestConfigMapsTransport(t *testing.T) {
	cfg := Config(drivers.Endpoint{Transport: drivers.Unix, Address: "/tmp/x.sock", User: "u", Password: "p", Database: "d"})
	if cfg.Net != "unix" || cfg.Addr != "/tmp/x.sock" || cfg.User != "u" || cfg.DBName != "d" {
		t.Fatalf("Config = %+v", cfg)
	}
	if cfg.InterpolateParams {
		t.Fatal("interpolateParams must stay off: the lookup uses a statement prepared once")
	}
}

// TestMySQL84Defaults: what dbsock's go-sql-driver configuration does with
// MySQL 8.4's caching_sha2_password. Over the socket the driver may send
// the password in clear (it does so for Net "unix"); over TCP there is no
// TLS and no server key set, so a full authentication fetches the server's
// RSA public key (go-sql-driver asks for it when cfg.pubKey is nil and TLS
// is off); no cleartext plugin is allowed over TCP.
func TestMySQL84Defaults(t *testing.T) {
	tcp := Config(drivers.Endpoint{Transport: drivers.TCP, Address: "127.0.0.1:3306", User: "u", Password: "p"})
	if tcp.Net != "tcp" || tcp.TLS != nil || tcp.TLSConfig != "" && tcp.TLSConfig != "false" {
		t.Errorf("TCP config: net %q, TLS %v (%q): want plain TCP", tcp.Net, tcp.TLS, tcp.TLSConfig)
	}
	if tcp.ServerPubKey != "" {
		t.Errorf("TCP config names a server public key %q: the driver must ask the server for it", tcp.ServerPubKey)
	}
	if tcp.AllowCleartextPasswords {
		t.Error("TCP config allows cleartext passwords over plain TCP")
	}
	unix := Config(drivers.Endpoint{Transport: drivers.Unix, Address: "/tmp/x.sock", User: "u", Password: "p"})
	if unix.Net != "unix" || unix.TLS != nil {
		t.Errorf("socket config: net %q, TLS %v: want the socket, no TLS", unix.Net, unix.TLS)
	}
	// The DSN dbsock's config writes is what a reader can paste.
	if dsn := tcp.FormatDSN(); strings.Contains(dsn, "tls=") || strings.Contains(dsn, "allowCleartextPasswords") {
		t.Errorf("TCP DSN %q carries TLS or cleartext settings", dsn)
	}
}

// TestVerified: a TCP session the server encrypts is the tls path; the
// socket stays unix whatever it says.
func TestVerified(t *testing.T) {
	tests := []struct {
		host, version, cipher string
		want                  drivers.Transport
	}{
		{"127.0.0.1:51234", "", "", drivers.TCP},
		{"127.0.0.1:51234", "TLSv1.3", "TLS_AES_128_GCM_SHA256", drivers.TLS},
		{"::1:51234", "", "", drivers.TCP6},
		{"localhost", "", "", drivers.Unix},
	}
	for _, tt := range tests {
		v := Verified(tt.host, tt.version, tt.cipher)
		if v.Transport != tt.want {
			t.Errorf("%s %q: %s, want %s (%s)", tt.host, tt.version, v.Transport, tt.want, v.Evidence)
		}
		if (v.Negotiated.TLSVersion == "TLS 1.3") != (tt.want == drivers.TLS) {
			t.Errorf("%s %q: negotiated %+v", tt.host, tt.version, v.Negotiated)
		}
	}
}

func TestAuthPlugin(t *testing.T) {
	for create, want := range map[string]string{
		"CREATE USER `dbsock`@`%` IDENTIFIED BY PASSWORD '*0123'":                                     "mysql_native_password",
		"CREATE USER `dbsock`@`%` IDENTIFIED VIA ed25519 USING 'abc'":                                 "ed25519",
		"CREATE USER `dbsock`@`%` IDENTIFIED WITH 'caching_sha2_password' AS '$A$005$x' REQUIRE NONE": "caching_sha2_password",
		"CREATE USER `dbsock`@`%` IDENTIFIED WITH 'mysql_native_password' AS '*0123'":                 "mysql_native_password",
		"CREATE USER `dbsock`@`localhost`":                                                            "",
	} {
		if got := AuthPlugin(create); got != want {
			t.Errorf("AuthPlugin(%q) = %q, want %q", create, got, want)
		}
	}
}
