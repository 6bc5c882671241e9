package compose

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/dbsock/dbsock/supply"
)

// serviceValues are what the run gives each service, the same in both
// projects: its port and password, and compose.yaml's secrets (name:
// value), written into secretsDir for a service while it starts, and
// secretNames each service's.
type serviceValues struct {
	ports       map[string]int
	pw          map[string]string
	secrets     map[string]string
	secretNames map[string][]string
	secretsDir  string
}

// serviceSecrets is what each service of compose.yaml lists under its
// secrets:, by service name. The file gives each list in one line
// ("    secrets: [a, b]"), which is read as it is, without a YAML parser
// that every program importing dbsock would compile; a test checks that
// it reads what a YAML parser reads.
func serviceSecrets() map[string][]string {
	uses := map[string][]string{}
	inServices, service := false, ""
	for _, line := range strings.Split(string(File), "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case trimmed == "" || strings.HasPrefix(trimmed, "#"):
		case !strings.HasPrefix(line, " "): // a top-level key
			inServices, service = trimmed == "services:", ""
		case inServices && strings.HasPrefix(line, "  ") && !strings.HasPrefix(line, "   ") && strings.HasSuffix(trimmed, ":"):
			service = strings.TrimSuffix(trimmed, ":")
		case service != "" && strings.HasPrefix(line, "    secrets: [") && strings.HasSuffix(trimmed, "]"):
			for _, name := range strings.Split(strings.TrimSuffix(strings.TrimPrefix(line, "    secrets: ["), "]"), ",") {
				uses[service] = append(uses[service], strings.TrimSpace(name))
			}
		}
	}
	return uses
}

// putSecrets writes target's secrets into the run's 0700 secrets dir,
// for its service to start (or restart) with. Compose mounts each file as
// it is into the service's container, where the user the server runs as
// must read it (an image may never run as root): 0644, in a
// directory no other host user may enter.
//
// Each is removed as soon as the service has read it (supply.RemoveOnceRead), or
// else by takeSecrets.
func (c *Compose) putSecrets(target string) error {
	var paths []string
	for _, name := range c.secretNames[target] {
		path := filepath.Join(c.secretsDir, name)
		if err := os.WriteFile(path, []byte(c.secrets[name]), 0o644); err != nil {
			return fmt.Errorf("compose provider: write the secret %s: %w", name, err)
		}
		paths = append(paths, path)
	}
	if c.Keep {
		return nil
	}
	if c.secretWatch == nil {
		c.secretWatch = map[string]func(){}
	}
	if stop := c.secretWatch[target]; stop != nil {
		stop()
	}
	c.secretWatch[target] = supply.RemoveOnceRead(paths)
	return nil
}

// takeSecrets removes target's secrets once its server is ready (its
// container keeps what it mounted), unless the project is kept.
func (c *Compose) takeSecrets(target string) {
	if c.Keep {
		return
	}
	if stop := c.secretWatch[target]; stop != nil {
		stop()
		delete(c.secretWatch, target)
	}
	for _, name := range c.secretNames[target] {
		os.Remove(filepath.Join(c.secretsDir, name))
	}
}
