package containers

import (
	"bytes"
	"context"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/dbsock/dbsock/supply"
)

func TestTailKeepsTheEnd(t *testing.T) {
	tests := []struct {
		name   string
		writes []string
		want   string
	}{
		{"under the limit", []string{"ab", "cd"}, "abcd"},
		{"at the limit", []string{"abc", "def"}, "cdef"},
		{"one write over it", []string{"abcdefgh"}, "efgh"},
		{"many writes", []string{"ab", "cd", "ef", "g"}, "defg"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tl := &tail{max: 4}
			for _, w := range tt.writes {
				if n, err := tl.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write(%q) = %d, %v", w, n, err)
				}
			}
			if got := string(tl.bytes()); got != tt.want {
				t.Errorf("kept %q, want %q", got, tt.want)
			}
		})
	}
}

// TestExecKeepsOnlyTheEndOfItsOutput: a command in a container that writes
// 64 MiB gives back its exit code and only the last maxExecOutput bytes,
// its last line included.
func TestExecKeepsOnlyTheEndOfItsOutput(t *testing.T) {
	const image = "dbsock/base:bookworm"
	if err := exec.Command("docker", "image", "inspect", image).Run(); err != nil {
		t.Skipf("no image %s (scripts/build-images.sh makes it): %v", image, err)
	}
	Quiet()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := runtime{}.Run(ctx, supply.ContainerRequest{Image: image, Cmd: []string{"sleep", "120"},
		Labels: map[string]string{"dbsock.test": "TestExecKeepsOnlyTheEndOfItsOutput"}})
	if c != nil {
		t.Cleanup(func() { c.Remove(context.Background(), time.Second) })
	}
	if err != nil {
		t.Fatal(err)
	}
	code, out, err := c.Exec(ctx, []string{"sh", "-c", "head -c 67108864 /dev/zero | tr '\\0' x; echo; echo the end; exit 3"})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(out)
	if code != 3 || len(b) != maxExecOutput || !bytes.HasSuffix(b, []byte("x\nthe end\n")) || strings.Trim(string(b[:100]), "x") != "" {
		t.Fatalf("exit %d, %d bytes ending %q; want 3 and the last %d bytes", code, len(b), b[max(len(b)-20, 0):], maxExecOutput)
	}
}
