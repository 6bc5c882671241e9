package supply

import (
	"strings"
	"testing"
)

// A server from the stand-in image says so in its origin, which the run's
// log prints as the server starts; the official image's does not. The
// stand-in's warning says how its image was built.
func TestStandInIsSaidAtTheStart(t *testing.T) {
	c := &Container{Image: "mysql:8.4", Offline: "dbsock/mariadb:10.11"}
	origin := "docker container 0123456789ab from image dbsock/mariadb:10.11"
	if got := StandInOrigin(origin, c, "dbsock/mariadb:10.11"); !strings.Contains(got, "dbsock's stand-in for the official mysql:8.4") {
		t.Fatalf("stand-in origin: %q", got)
	}
	if got := StandInOrigin("docker container x from image mysql:8.4", c, "mysql:8.4"); strings.Contains(got, "stand-in") {
		t.Fatalf("official origin: %q", got)
	}
	note := StandInNote(c, "no such host")
	if !strings.Contains(note, "ran its stand-in dbsock/mariadb:10.11, built from Debian's packages by make images") {
		t.Fatalf("note: %q", note)
	}
	c.OfflineBuilt = "FerretDB built from the Go module proxy"
	if note := StandInNote(c, "no such host"); strings.Contains(note, "Debian's packages") || !strings.Contains(note, "Go module proxy") {
		t.Fatalf("note of an image built otherwise: %q", note)
	}
}
