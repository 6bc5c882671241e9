package agents

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/dbsock/dbsock/supply"
)

// tempPrefix begins the name of an agent's own temp dir.
const tempPrefix = "dbsock-agent-"

// tempDir makes the agent's own temp dir, its TMPDIR, where the files it
// writes (an open's CA) go, and which goes with it however dbsock ends:
// dbsock removes it when the agent has ended, the keeper when dbsock is
// gone, and dbsock clean (it is marked with the run's owner) when both
// were killed outright. It is "" when env names a TMPDIR of its own.
func tempDir(env []string) (string, error) {
	for _, kv := range env {
		if strings.HasPrefix(kv, "TMPDIR=") {
			return "", nil
		}
	}
	dir, err := os.MkdirTemp("", tempPrefix)
	if err != nil {
		return "", fmt.Errorf("make the agent's temp dir: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, supply.OwnerFile), []byte(supply.Self().String()+"\n"), 0o600); err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("mark the agent's temp dir %s: %w", dir, err)
	}
	return dir, nil
}

// removeTempDir removes dir when it is an agent's temp dir.
func removeTempDir(dir string) {
	if dir != "" && strings.HasPrefix(filepath.Base(dir), tempPrefix) {
		_ = os.RemoveAll(dir)
	}
}
