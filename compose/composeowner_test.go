package compose

import (
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/dbsock/dbsock/supply"
)

// TestComposeServicesCarryTheirOwner: every service compose.yaml starts
// carries dbsock.owner, from DBSOCK_OWNER (the run's Owner), which dbsock
// clean judges as it judges the docker provider's containers; started by
// hand, it is "by-hand", which names no owner and is never removed.
func TestComposeServicesCarryTheirOwner(t *testing.T) {
	var f struct {
		Services map[string]struct {
			Labels map[string]string
		}
	}
	if err := yaml.Unmarshal(File, &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Services) == 0 {
		t.Fatal("compose.yaml has no services")
	}
	for name, s := range f.Services {
		if got := s.Labels[supply.OwnerLabel]; got != "${DBSOCK_OWNER:-by-hand}" {
			t.Errorf("service %s: label %s is %q", name, supply.OwnerLabel, got)
		}
	}
	if _, err := supply.ParseOwner("by-hand"); err == nil {
		t.Error(`"by-hand" parses as an owner`)
	}
}
