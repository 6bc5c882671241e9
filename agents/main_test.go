package agents_test

import (
	"os"
	"testing"

	"github.com/dbsock/dbsock/supply/child"
)

// TestMain serves dbsock's own servers (floor, echo) when the local
// provider starts this test binary as one of them.
func TestMain(m *testing.M) {
	child.MaybeRun()
	os.Exit(m.Run())
}
