package all_test

import (
	"maps"
	"testing"

	"github.com/dbsock/dbsock/targets"
)

// TestHopsAreRegistered: the hops --via and the external provider's
// search for proxies read are the targets that say so, registered with
// the target they stand in front of.
func TestHopsAreRegistered(t *testing.T) {
	if got, want := targets.HopProcesses(), map[string]string{"pgbouncer": "PgBouncer", "haproxy": "HAProxy", "twemproxy": "twemproxy"}; !maps.Equal(got, want) {
		t.Errorf("HopProcesses %v, want %v", got, want)
	}
	if got := targets.HopPhrase(); got != "pgbouncer in front of postgres, haproxy in front of redis or mysql, twemproxy in front of redis" {
		t.Errorf("HopPhrase %q", got)
	}
}
