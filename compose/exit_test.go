package compose_test

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/dbsock/dbsock/compose"
	"github.com/dbsock/dbsock/internal/testutil"
	"github.com/dbsock/dbsock/targets"
	_ "github.com/dbsock/dbsock/targets/all" // the registry's recipes
)

// TestComposeServiceThatExitsIsSaidAtOnce: a compose service whose
// container exits while it starts (an image whose entrypoint fails after a
// second, as an official image's set-up does on a bad setting) fails the
// supply at once, naming the service, its exit code and its log's last
// lines, instead of waiting out the 3-minute readiness limit.
func TestComposeServiceThatExitsIsSaidAtOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("needs Docker and images; skipped with -short")
	}
	if err := exec.Command("docker", "image", "inspect", "dbsock/base:bookworm").Run(); err != nil {
		if os.Getenv(testutil.RequireEnv) != "" {
			t.Fatal("Docker image dbsock/base:bookworm is not here (run make images)")
		}
		t.Skip("Docker image dbsock/base:bookworm is not here (run make images)")
	}
	image := "dbsock/test-exits:1"
	build := exec.Command("docker", "build", "-q", "-t", image, "-")
	build.Env = append(os.Environ(), "DOCKER_BUILDKIT=0")
	build.Stdin = strings.NewReader("FROM dbsock/base:bookworm\n" +
		`ENTRYPOINT ["sh", "-c", "echo initialising; sleep 1; echo 'error: the data directory is unusable' >&2; exit 3"]` + "\n")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("docker build %s: %v\n%s", image, err, out)
	}
	t.Cleanup(func() { _ = exec.Command("docker", "image", "rm", "-f", image).Run() })

	tg, ok := targets.Lookup("redis")
	if !ok {
		t.Fatal("redis is not registered")
	}
	c := compose.NewCompose(targets.Containers())
	c.Images = map[string]string{"redis": image}
	t.Cleanup(func() { _ = c.Close() })
	start := time.Now()
	_, err := c.Supply(context.Background(), tg.Supply())
	took := time.Since(start)
	if err == nil {
		t.Fatal("the supply of a service that exited succeeded")
	}
	for _, want := range []string{"compose service redis", "exited before it was ready", "exit 3", "error: the data directory is unusable", "initialising"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	// The container lives about a second; compose's up takes a few more.
	// The readiness limit it must not wait for is 3 minutes.
	t.Logf("the supply failed %v after it began (the container exits after about 1 s)", took.Round(time.Millisecond))
	if took > 20*time.Second {
		t.Errorf("the supply took %v to say the service exited", took)
	}
}
