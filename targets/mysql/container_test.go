package mysql

import (
	"strings"
	"testing"
)

func TestContainerListensOnTheGivenInterface(t *testing.T) {
	sp, err := container(1, t.TempDir(), "0.0.0.0")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(sp.Cmd, " "), "--bind-address=0.0.0.0") {
		t.Errorf("behind a published port the server must listen on the container's interface: %v", sp.Cmd)
	}
}
