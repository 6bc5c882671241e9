package dbsocktest

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/dbsock/dbsock"
	_ "github.com/dbsock/dbsock/clients/dbsockredis"
)

// recorder is a testing.TB whose Skip and Fatal are recorded (and end the
// goroutine, as testing's do).
type recorder struct {
	testing.TB
	skipped, failed string
}

func (r *recorder) Helper()        {}
func (r *recorder) Cleanup(func()) {}
func (r *recorder) Skipf(format string, args ...any) {
	r.skipped = fmt.Sprintf(format, args...)
	runtime.Goexit()
}
func (r *recorder) Skip(args ...any)  { r.skipped = fmt.Sprint(args...); runtime.Goexit() }
func (r *recorder) Fatal(args ...any) { r.failed = fmt.Sprint(args...); runtime.Goexit() }
func (r *recorder) Fatalf(format string, args ...any) {
	r.failed = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// TestStartWithoutServers: with no server to be had (a docker engine that
// is not there), Start skips, saying that nothing was measured and how to
// fail instead; with DBSOCK_REQUIRE_SERVERS=1 it fails.
func TestStartWithoutServers(t *testing.T) {
	t.Setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
	for _, tt := range []struct{ env, want string }{{"", "skip"}, {"0", "skip"}, {"1", "fail"}, {"true", "fail"}} {
		t.Run(RequireEnv+"="+tt.env, func(t *testing.T) {
			t.Setenv(RequireEnv, tt.env)
			r := &recorder{TB: t}
			done := make(chan struct{})
			go func() {
				defer close(done)
				Start(r, "redis", dbsock.StartOptions{Provider: "docker"})
			}()
			<-done
			switch {
			case tt.want == "skip" && (r.skipped == "" || !strings.Contains(r.skipped, "set "+RequireEnv+"=1 to fail instead")):
				t.Errorf("skipped %q, failed %q: want a skip that says how to fail instead", r.skipped, r.failed)
			case tt.want == "fail" && (r.failed == "" || r.skipped != ""):
				t.Errorf("skipped %q, failed %q: want a failure", r.skipped, r.failed)
			}
		})
	}
}
