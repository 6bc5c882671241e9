package compose

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestContainerSpecKeepsPasswordsOffCommandLines checks the command lines
// dbsock gives containers: loopback only, sockets in /sock, and no password.
func TestContainerSpecKeepsPasswordsOffCommandLines(t *testing.T) {
	for target, r := range recipes {
		dir := t.TempDir()
		sp, err := r.Container.Spec(12345, dir, "127.0.0.1")
		if err != nil {
			t.Fatal(err)
		}
		cmd := strings.Join(sp.Cmd, " ")
		if sp.Password != "" && strings.Contains(cmd, sp.Password) {
			t.Errorf("%s: the password is on the command line: %s", target, cmd)
		}
		if !strings.Contains(cmd, "127.0.0.1") && sp.Config == "" {
			t.Errorf("%s: not bound to 127.0.0.1: %s", target, cmd)
		}
		if !strings.Contains(cmd, "/sock") {
			t.Errorf("%s: socket not in the bind-mounted /sock: %s", target, cmd)
		}
		if sp.Config != "" {
			b, err := os.ReadFile(filepath.Join(dir, sp.Config))
			if err != nil || !strings.Contains(string(b), "bind 127.0.0.1") || !strings.Contains(string(b), "requirepass "+sp.Password) {
				t.Errorf("%s: config file %q: %v", target, b, err)
			}
		}
	}
	sp, _ := MySQL.Container.Spec(1, t.TempDir(), "0.0.0.0")
	if !strings.Contains(strings.Join(sp.Cmd, " "), "--bind-address=0.0.0.0") {
		t.Errorf("behind a published port the server must listen on the container's interface: %v", sp.Cmd)
	}
}

// recipes are the servers the tests of this package start, by target name.
var recipes = map[string]Recipe{"mysql": MySQL, "redis": Redis, "mongo": Mongo, "postgres": Postgres}

func TestComposeFileIsEmbedded(t *testing.T) {
	for _, want := range []string{"network_mode: host", "${DBSOCK_SOCKET_DIR:-/tmp/dbsock-compose}/mysql:/sock", "healthcheck", "dbsock.pid"} {
		if !strings.Contains(string(File), want) {
			t.Errorf("compose.yaml lacks %q", want)
		}
	}
}
