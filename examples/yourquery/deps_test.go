package yourquery

import (
	"os/exec"
	"strings"
	"testing"
)

// TestOneDatabaseCompilesOnlyItsClient: the orders package (pgx) and its
// test pull in no other database driver, no container runtime and no
// plotting: importing dbsock for one database builds only what that
// needs. dbsock's README gives the figure.
func TestOneDatabaseCompilesOnlyItsClient(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-test", "./orders").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := strings.Fields(string(out))
	for _, p := range deps {
		for _, heavy := range []string{"go.mongodb.org/", "github.com/go-sql-driver/", "github.com/redis/", "github.com/bradfitz/",
			"github.com/testcontainers/", "github.com/moby/moby/client", "github.com/docker/", "go.opentelemetry.io/", "google.golang.org/grpc", "gonum.org/v1/plot"} {
			if strings.HasPrefix(p, heavy) {
				t.Errorf("the pgx-only package compiles %s", p)
			}
		}
	}
	if len(deps) > 400 {
		t.Errorf("go list -deps -test ./orders: %d packages, want well under the 629 a test of one database pulled in when dbsock imported every driver", len(deps))
	}
	t.Logf("go list -deps -test ./orders: %d packages", len(deps))
}
