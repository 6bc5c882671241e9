package dbsock

import (
	"strings"
	"testing"
	"time"

	"github.com/dbsock/dbsock/supply"
)

// stuckProvider's Close never returns: an engine that stopped answering.
type stuckProvider struct{ supply.Provider }

func (stuckProvider) Close() error { select {} }

// TestCloseIsBounded: a server whose provider does not finish closing is
// given up on after the limit, with what to do, and a second Close says
// the same at once.
func TestCloseIsBounded(t *testing.T) {
	serverCloseLimit = 200 * time.Millisecond
	defer func() { serverCloseLimit = CloseTimeout }()
	s := &Server{Target: "redis", Origin: "docker container 0123456789ab", srv: &supply.Server{}, provider: stuckProvider{}}
	err := s.Close() // without the bound, it would never return
	if err == nil || !strings.Contains(err.Error(), "did not stop within 200ms; run dbsock clean") {
		t.Fatalf("Close of a stuck server: %v", err)
	}
	if again := s.Close(); again != err {
		t.Errorf("a second Close: %v", again)
	}
}
