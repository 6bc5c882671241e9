package supply

import (
	"slices"
	"testing"
)

// TestServerEnv: a server gets PATH, the locale, TZ, HOME and TMPDIR from
// dbsock's environment, and what its recipe adds, nothing else.
func TestServerEnv(t *testing.T) {
	for name, value := range map[string]string{"PATH": "/usr/bin", "LC_ALL": "C", "TZ": "UTC", "HOME": "/root", "TMPDIR": "/tmp",
		"DBSOCK_MYSQL_PASSWORD": "secret", "CI_JOB_TOKEN": "token", "AWS_SECRET_ACCESS_KEY": "key", "PATHEXT": "x"} {
		t.Setenv(name, value)
	}
	env := ServerEnv("FERRETDB_TELEMETRY=disable")
	for _, tc := range []struct {
		kv   string
		kept bool
	}{
		{"PATH=/usr/bin", true}, {"LC_ALL=C", true}, {"TZ=UTC", true}, {"HOME=/root", true}, {"TMPDIR=/tmp", true},
		{"FERRETDB_TELEMETRY=disable", true},
		{"DBSOCK_MYSQL_PASSWORD=secret", false}, {"CI_JOB_TOKEN=token", false}, {"AWS_SECRET_ACCESS_KEY=key", false}, {"PATHEXT=x", false},
	} {
		if got := slices.Contains(env, tc.kv); got != tc.kept {
			t.Errorf("%s: kept %v, want %v (env %q)", tc.kv, got, tc.kept, env)
		}
	}
}
