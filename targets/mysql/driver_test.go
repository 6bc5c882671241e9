package mysql

import (
	"testing"

	"github.com/dbsock/dbsock/drivers"
)

func TestTransportOfHost(t *testing.T) {
	for host, want := range map[string]drivers.Transport{
		"localhost":       drivers.Unix,
		"127.0.0.1:51234": drivers.TCP,
		"localhost:51234": drivers.TCP,
		"[::1]:3306":      drivers.TCP,
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
