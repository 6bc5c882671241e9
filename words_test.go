package dbsock_test

import (
	"context"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dbsock/dbsock"
)

// TestCompareNamesItsOptions: Compare against a server that accepts and
// never answers says so naming CompareOptions.OpTimeout, in its error and
// in its report's target, and names no flag of dbsock run.
func TestCompareNamesItsOptions(t *testing.T) {
	tl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(t.TempDir(), "redis.sock")
	ul, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	held := make(chan net.Conn, 16)
	for _, l := range []net.Listener{tl, ul} {
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				held <- c // kept open, and never answered
			}
		}()
	}
	t.Cleanup(func() {
		tl.Close()
		ul.Close()
		for len(held) > 0 {
			(<-held).Close()
		}
	})
	srv, err := dbsock.External("redis", dbsock.Endpoint{Address: tl.Addr().String()}, dbsock.Endpoint{Address: sock})
	if err != nil {
		t.Fatal(err)
	}
	opt := dbsock.CompareOptions{N: 10, Instances: 1, OpTimeout: 300 * time.Millisecond}
	rep, err := dbsock.Compare(context.Background(), srv, "silent", redisOp(0, nil), opt)
	if err == nil {
		t.Fatal("Compare succeeded against a server that never answers")
	}
	const want = "did not answer within 300ms (CompareOptions.OpTimeout)"
	if !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "--") {
		t.Errorf("error %q, want it to say %q and name no flag", err, want)
	}
	if rep == nil || len(rep.Targets) != 1 {
		t.Fatalf("report %+v, want the one target", rep)
	}
	if e := rep.Targets[0].Error; !strings.Contains(e, want) || strings.Contains(e, "--") {
		t.Errorf("the report's target says %q, want %q and no flag", e, want)
	}
}
