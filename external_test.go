package dbsock_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dbsock/dbsock"
	_ "github.com/dbsock/dbsock/clients/dbsockredis" // the redis target
	"github.com/dbsock/dbsock/supply"
)

// TestExternalSaysWhichArgumentIsMissing: a server given by one endpoint
// is refused naming External's argument that is missing (not a flag of
// dbsock run), and the error is still the supply layer's typed value.
func TestExternalSaysWhichArgumentIsMissing(t *testing.T) {
	_, err := dbsock.External("redis", dbsock.Endpoint{Address: "127.0.0.1:6379"}, dbsock.Endpoint{})
	want := `dbsock.External("redis"): external redis server: both transports are compared, so both endpoints are needed: no unix endpoint was given: pass External's unix argument`
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("External without unix: %v, want %q", err, want)
	}
	if strings.Contains(err.Error(), "--") {
		t.Errorf("a library user is told of a flag: %v", err)
	}
	var m *supply.MissingEndpoint
	if !errors.As(err, &m) || m.Target != "redis" || len(m.Paths) != 1 || m.Paths[0] != dbsock.Unix {
		t.Errorf("errors.As MissingEndpoint: %+v", m)
	}
}

// TestStartNamesItsOwnOption: a provider Start cannot use here (an engine
// that says it is Docker Desktop: a fake one, answering the engine API on
// a socket) is refused naming StartOptions.Provider, the option a library
// user sets, and no flag.
func TestStartNamesItsOwnOption(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "docker.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	engine := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/info") {
			w.Write([]byte(`{"ServerVersion":"27.3.1","OperatingSystem":"Docker Desktop","OSType":"linux","SecurityOptions":[]}`))
			return
		}
		http.Error(w, "not in this fake", http.StatusNotImplemented)
	})}
	go engine.Serve(l)
	defer engine.Close()
	t.Setenv("DOCKER_HOST", "unix://"+sock)
	for _, provider := range []string{"docker", "compose"} {
		_, err := dbsock.Start(context.Background(), "redis", dbsock.StartOptions{Provider: provider})
		if err == nil || !strings.Contains(err.Error(), "is Docker Desktop, which runs containers in a VM") || !strings.Contains(err.Error(), "Use StartOptions.Provider local") {
			t.Errorf("Start with provider %s: %v", provider, err)
		}
		if err != nil && strings.Contains(err.Error(), "Plan.ProviderName") {
			t.Errorf("Start with provider %s names the engine's field: %v", provider, err)
		}
	}
}
