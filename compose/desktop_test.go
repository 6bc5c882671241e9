package compose

import (
	"context"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/dbsock/dbsock/supply"
)

// TestDockerDesktopIsSaidBeforeAnythingStarts: an engine that says it is
// Docker Desktop (a fake one, answering the engine API on a socket) gets
// both container providers' explanation (and the client container its own), and no request that would start
// anything reaches it.
func TestDockerDesktopIsSaidBeforeAnythingStarts(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "docker.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var asked []string
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		asked = append(asked, r.Method+" "+r.URL.Path)
		mu.Unlock()
		switch {
		case strings.HasSuffix(r.URL.Path, "/_ping"):
			w.Write([]byte("OK"))
		case strings.HasSuffix(r.URL.Path, "/info"):
			w.Write([]byte(`{"ServerVersion":"27.3.1","OperatingSystem":"Docker Desktop","OSType":"linux","SecurityOptions":[]}`))
		default:
			http.Error(w, "not in this fake", http.StatusNotImplemented)
		}
	})}
	go srv.Serve(l)
	defer srv.Close()
	t.Setenv("DOCKER_HOST", "unix://"+sock)
	target := supply.Target{Name: "redis", Recipe: supply.Recipe{Container: &supply.Container{Image: "redis:7", Offline: "dbsock/redis:7.0"}}}
	d := supply.NewDocker()
	defer d.Close()
	c := NewCompose([]supply.Target{target})
	defer c.Close()
	for _, p := range []supply.Provider{d, c} {
		_, err := p.Supply(context.Background(), target)
		if err == nil || !strings.Contains(err.Error(), "is Docker Desktop, which runs containers in a VM") || !strings.Contains(err.Error(), "Use Plan.ProviderName local") {
			t.Errorf("%s provider: %v", p.Name(), err)
		}
	}
	_, err = supply.StartClient(context.Background(), supply.ClientOptions{Binary: "/nonexistent", Target: "redis"})
	if err == nil || !strings.Contains(err.Error(), "the engine is Docker Desktop, which runs containers in a VM") || !strings.Contains(err.Error(), "needs a Linux engine with host networking") {
		t.Errorf("client container: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, a := range asked {
		if !strings.HasSuffix(a, "/_ping") && !strings.HasSuffix(a, "/info") {
			t.Errorf("the fake engine was asked %s: something was about to start", a)
		}
	}
}
