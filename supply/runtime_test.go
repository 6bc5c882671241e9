package supply

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
)

// TestDockerWithoutARuntime: a program that did not import
// supply/containers gets a docker provider that says what to import, as
// ErrCannotSupply (so auto goes on to a local process); and making the
// provider changes none of testcontainers' process-wide settings.
func TestDockerWithoutARuntime(t *testing.T) {
	if registered != nil {
		t.Skip("a runtime is registered in this test binary")
	}
	t.Setenv("TESTCONTAINERS_RYUK_DISABLED", "")
	os.Unsetenv("TESTCONTAINERS_RYUK_DISABLED")
	d := NewDocker()
	d.probe = &Engine{Reachable: true, HostNetwork: true, OS: "Debian GNU/Linux 12"} // an engine that would do
	target := Target{Name: "redis", Recipe: Recipe{Container: &Container{Image: "redis:7", Offline: "dbsock/redis:7.0"}}}
	_, err := d.Supply(context.Background(), target)
	if !errors.Is(err, ErrCannotSupply) || !strings.Contains(err.Error(), `import _ "github.com/dbsock/dbsock/supply/containers"`) {
		t.Errorf("docker without a runtime: %v", err)
	}
	if v, set := os.LookupEnv("TESTCONTAINERS_RYUK_DISABLED"); set {
		t.Errorf("the docker provider set TESTCONTAINERS_RYUK_DISABLED=%q for the whole process", v)
	}
	if err := d.Close(); err != nil {
		t.Error(err)
	}
}
