package compose_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/dbsock/dbsock/compose"
	"github.com/dbsock/dbsock/supply"
	"github.com/dbsock/dbsock/targets"
	_ "github.com/dbsock/dbsock/targets/all"
)

// TestComposeFileIsGenerated: compose.yaml is what go generate ./compose
// writes from the targets' descriptions of their servers, so that the
// file users run by hand and the compose provider runs starts the same
// servers as the docker provider.
func TestComposeFileIsGenerated(t *testing.T) {
	want, err := compose.Render(targets.Containers())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(compose.File, want) {
		got, wantLines := strings.Split(string(compose.File), "\n"), strings.Split(string(want), "\n")
		line := 0
		for line < len(got) && line < len(wantLines) && got[line] == wantLines[line] {
			line++
		}
		t.Fatalf("compose/compose.yaml is stale: it differs from its targets' descriptions from line %d on; run go generate ./compose (go run ./compose/gen compose/compose.yaml) and commit the file", line+1)
	}
}

// TestEveryServiceIsDescribed: every target with an image has a
// description of its server, from which its compose service comes, and the
// container's command is the service's with the docker provider's values
// (but a hop in a container of its own in front of another's server, which
// the docker provider alone starts, and which has no service).
func TestEveryServiceIsDescribed(t *testing.T) {
	for _, tg := range targets.Containers() {
		if tg.Container.Behind != nil {
			continue
		}
		d := tg.Container.Described
		if d == nil {
			t.Errorf("%s: no description of its server", tg.Name)
			continue
		}
		sp, err := tg.Container.Spec(supply.SpecFor{Port: 12345, Dir: t.TempDir(), Bind: "127.0.0.1,::1"})
		if err != nil {
			t.Fatal(err)
		}
		svc := d.ComposeService()
		if len(sp.Cmd) != len(svc.Command) || sp.Cmd[0] != svc.Command[0] {
			t.Errorf("%s: the container runs %q, its compose service %q", tg.Name, sp.Cmd, svc.Command)
		}
		if len(sp.Secrets) != len(svc.Secrets) {
			t.Errorf("%s: the container is handed secrets %v, its compose service %v", tg.Name, sp.Secrets, svc.Secrets)
		}
	}
}
