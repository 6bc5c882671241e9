package mysql

import (
	"strings"
	"testing"

	"github.com/dbsock/dbsock/supply"
)

func TestContainerListensOnTheGivenInterface(t *testing.T) {
	sp, err := description.Spec(supply.SpecFor{Port: 1, Dir: t.TempDir(), Bind: "0.0.0.0"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(sp.Cmd, " "), "--bind-address=0.0.0.0") {
		t.Errorf("behind a published port the server must listen on the container's interface: %v", sp.Cmd)
	}
}
