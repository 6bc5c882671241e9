package compose

import (
	"strings"
	"testing"
)

func TestComposeFileIsEmbedded(t *testing.T) {
	for _, want := range []string{"network_mode: host", "${DBSOCK_SOCKET_DIR:-/tmp/dbsock-compose}/mysql:/sock", "healthcheck", "dbsock.pid"} {
		if !strings.Contains(string(File), want) {
			t.Errorf("compose.yaml lacks %q", want)
		}
	}
}
