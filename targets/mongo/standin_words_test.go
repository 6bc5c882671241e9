package mongo

import (
	"strings"
	"testing"

	"github.com/dbsock/dbsock/supply"
)

// dbsock/ferretdb's FerretDB is the one scripts/install-deps.sh builds
// from the Go module proxy, not a Debian package: the stand-in's warning
// says so.
func TestStandInSaysHowFerretDBWasBuilt(t *testing.T) {
	note := supply.StandInNote(recipe.Container, "no registry")
	if strings.Contains(note, "Debian's packages") || !strings.Contains(note, "Go module proxy") || !strings.Contains(note, "dbsock/ferretdb:1.24") {
		t.Fatalf("the stand-in's note: %s", note)
	}
}
