// Package targettest gives a registered target's own tests its real
// server: from a real provider (local, docker or compose; skipped where
// that provider has no binaries or images here), stopped when the test
// ends. It imports nothing above the targets; package
// pipeline/pipelinetest measures a target end to end with it.
package targettest

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/dbsock/dbsock/compose"
	"github.com/dbsock/dbsock/internal/testutil"
	"github.com/dbsock/dbsock/supply"
	"github.com/dbsock/dbsock/supply/containers" // the docker provider's runtime
	"github.com/dbsock/dbsock/targets"
	_ "github.com/dbsock/dbsock/targets/all" // every target, as in the command
)

// Tests of dbsock's own targets start containers as the dbsock command
// does: testcontainers' reaper off (no registry for its image here) and
// its logger quiet.
func init() { containers.Quiet() }

// Binaries are the server binaries each database target's local recipe
// can start (any one will do); dbsock's own servers need none.
var Binaries = map[string][]string{
	"mysql":     {"mariadbd", "mysqld"},
	"redis":     {"redis-server"},
	"mongo":     {"mongod", "ferretdb"},
	"postgres":  {"initdb"},
	"memcached": {"memcached"},
	"pgbouncer": {"pgbouncer"},
	// HAProxy in front of a server: both binaries are needed, the
	// server's checked by its own target's entry.
	"haproxy-redis": {"haproxy"},
	"haproxy-mysql": {"haproxy"},
	// twemproxy in front of Redis.
	"twemproxy-redis": {"nutcracker"},
}

// Local starts target's server with the local provider; it is stopped when
// the test ends.
func Local(t *testing.T, target string, binaries ...string) *supply.Server {
	t.Helper()
	testutil.NeedAny(t, binaries...)
	return Supplied(t, target, "local")
}

// Supplied starts target's server with provider (local, docker or
// compose; skipped where that provider has no binaries or images here) and
// stops it when the test ends.
func Supplied(t *testing.T, target, provider string) *supply.Server {
	t.Helper()
	return SuppliedAs(t, Lookup(t, target).Supply(), provider)
}

// SuppliedAs is Supplied for a recipe of the test's own (a registered
// target's, changed).
func SuppliedAs(t *testing.T, ct supply.Target, provider string) *supply.Server {
	t.Helper()
	tg := Lookup(t, ct.Name)
	p := Provider(t, tg, provider, Binaries[ct.Name])
	t.Cleanup(func() { _ = p.Close() })
	srv, err := p.Supply(context.Background(), ct)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Stop(context.Background()) })
	return srv
}

// Lookup is the registered target; an unknown one fails the test.
func Lookup(t *testing.T, target string) *targets.Target {
	t.Helper()
	tg, ok := targets.Lookup(target)
	if !ok {
		t.Fatalf("target %s is not registered", target)
	}
	return tg
}

// Provider is a provider of tg's server for a test: "local" (skipped, or
// under testutil.RequireEnv failed, unless one of binaries is installed),
// "docker" (with the tls path) or "compose", each of those with the
// target's offline image, and that of the server behind a hop in a
// container of its own (skipped with -short, or where one is not built).
func Provider(t *testing.T, tg *targets.Target, provider string, binaries []string) supply.Provider {
	t.Helper()
	switch provider {
	case "local":
		testutil.NeedAny(t, binaries...)
		return supply.NewLocal()
	case "docker", "compose":
		if testing.Short() {
			t.Skip("needs Docker and images; skipped with -short")
		}
		if tg.Container == nil {
			t.Fatalf("target %s has no image", tg.Name)
		}
		images := map[string]string{tg.Name: tg.Container.Offline}
		if b := tg.Container.Behind; b != nil && b.Container != nil {
			images[b.Name] = b.Container.Offline // the server behind a hop in a container of its own
		}
		for _, image := range images {
			if err := exec.Command("docker", "image", "inspect", image).Run(); err != nil {
				if os.Getenv(testutil.RequireEnv) != "" {
					t.Fatalf("Docker image %s is not here (run make images)", image)
				}
				t.Skipf("Docker image %s is not here (run make images)", image)
			}
		}
		if provider == "docker" {
			d := supply.NewDocker()
			d.Images, d.TLS = images, true // run asks for the tls path
			return d
		}
		c := compose.NewCompose(targets.Containers())
		c.Images = images
		return c
	}
	t.Fatalf("unknown provider %q", provider)
	return nil
}

// Contains fails the test unless err's text has every one of words.
func Contains(t *testing.T, err error, words ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one saying %q", words)
	}
	for _, w := range words {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not say %q", err, w)
		}
	}
}

// External is the external provider of srv's two endpoints for target.
func External(target string, srv *supply.Server) *supply.External {
	return &supply.External{Endpoints: map[string]supply.Pair{target: {TCP: srv.TCP(), Unix: srv.Unix()}}}
}

// Serves says whether the server provider starts for target (product, as
// it says) serves the tcp6 and the tls paths: every database server
// dbsock starts does, but FerretDB (it listens on one address) on tcp6,
// every server of compose.yaml (no certificate) and dbsock's own servers
// on tls, and a mongo container, or a local mongo that is not FerretDB,
// on tls (mongod and FerretDB serve TLS on different ports).
func Serves(target, provider, product string) (tcp6, tls bool) {
	tcp6 = product != "FerretDB"
	switch {
	case Binaries[target] == nil, provider == "compose":
		tls = false
	case target == "mongo" && (provider == "docker" || product != "FerretDB"):
		tls = false
	default:
		tls = true
	}
	return tcp6, tls
}
