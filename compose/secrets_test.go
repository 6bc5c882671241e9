package compose

import (
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestServiceSecretsComeFromComposeYAML: the compose provider reads the
// secrets each service uses from compose.yaml itself, as a YAML parser
// reads them: every service has its NAME-password, each secret a service
// uses is its own (named after it) and declared under the file's
// secrets:, and mysql's root password, which only compose.yaml names, is
// among mysql's.
func TestServiceSecretsComeFromComposeYAML(t *testing.T) {
	uses := serviceSecrets()
	var f struct {
		Services map[string]struct{ Secrets []string }
		Secrets  map[string]any
	}
	if err := yaml.Unmarshal(File, &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Services) == 0 || len(uses) != len(f.Services) {
		t.Fatalf("read the secrets of %d services, the YAML parser %d", len(uses), len(f.Services))
	}
	for service, s := range f.Services {
		if !slices.Equal(uses[service], s.Secrets) {
			t.Errorf("service %s: read secrets %q, the YAML parser %q", service, uses[service], s.Secrets)
		}
	}
	for service, names := range uses {
		if !slices.Contains(names, service+"-password") {
			t.Errorf("service %s does not use %s-password (it uses %q)", service, service, names)
		}
		for _, n := range names {
			if !strings.HasPrefix(n, service+"-") {
				t.Errorf("service %s uses secret %s, which is not its own", service, n)
			}
			if _, ok := f.Secrets[n]; !ok {
				t.Errorf("service %s uses secret %s, which compose.yaml does not declare", service, n)
			}
		}
	}
	if !slices.Contains(uses["mysql"], "mysql-root-password") {
		t.Errorf("mysql's secrets %q lack mysql-root-password", uses["mysql"])
	}
}
