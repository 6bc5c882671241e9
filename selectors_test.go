package dbsock_test

import (
	"context"
	"net"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/dbsock/dbsock"
)

// goSelector is a setting named as a Go selector: the library's own
// options (CompareOptions.N, StartOptions.Provider) are, and nothing else
// it says may be (Plan.Loop.N, External.Endpoints: the engine's words).
var goSelector = regexp.MustCompile(`\b[A-Z][A-Za-z0-9]*\.[A-Z][A-Za-z0-9]*`)

// engineSelector is the first Go selector in text that is not one of the
// library's options.
func engineSelector(text string) string {
	for _, sel := range goSelector.FindAllString(text, -1) {
		if !strings.HasPrefix(sel, "CompareOptions.") && !strings.HasPrefix(sel, "StartOptions.") {
			return sel
		}
	}
	return ""
}

// TestNoEngineSelectorReachesTheLibrary: what the engine refuses of a
// comparison, of a server the user runs and of a server to start reaches
// the library's user worded with its options, never naming a field as the
// engine does.
func TestNoEngineSelectorReachesTheLibrary(t *testing.T) {
	tl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer tl.Close()
	sock := filepath.Join(t.TempDir(), "redis.sock")
	ul, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ul.Close()
	tcp, unix := dbsock.Endpoint{Address: tl.Addr().String()}, dbsock.Endpoint{Address: sock}
	srv, err := dbsock.External("redis", tcp, unix)
	if err != nil {
		t.Fatal(err)
	}
	noop := func(context.Context, dbsock.Endpoint) (func(context.Context) error, func() error, error) {
		return func(context.Context) error { return nil }, nil, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	short := 300 * time.Millisecond // should one be measured, against listeners that never answer
	for _, opt := range []dbsock.CompareOptions{
		{N: -5, OpTimeout: short},
		{Warmup: -5, OpTimeout: short},
		{Rounds: -1, OpTimeout: short},
		{Blocks: 20, N: 10, OpTimeout: short},
		{Instances: -1, OpTimeout: short},
		{Concurrency: 1 << 20, OpTimeout: short},
		{OpTimeout: time.Millisecond},
		{Placement: "diagonal", OpTimeout: short},
	} {
		_, err := dbsock.Compare(ctx, srv, "noop", noop, opt)
		if err == nil {
			t.Errorf("Compare with %+v succeeded; want it refused", opt)
			continue
		}
		if sel := engineSelector(err.Error()); sel != "" {
			t.Errorf("Compare with %+v names %s, as the engine does: %v", opt, sel, err)
		}
	}
	for name, external := range map[string]func() (*dbsock.Server, error){
		"no endpoint": func() (*dbsock.Server, error) { return dbsock.External("redis", dbsock.Endpoint{}, dbsock.Endpoint{}) },
		"tcp alone":   func() (*dbsock.Server, error) { return dbsock.External("redis", tcp, dbsock.Endpoint{}) },
		"bad provider": func() (*dbsock.Server, error) {
			return dbsock.Start(ctx, "redis", dbsock.StartOptions{Provider: "cloud"})
		},
	} {
		_, err := external()
		if err == nil {
			t.Errorf("%s: succeeded; want it refused", name)
			continue
		}
		if sel := engineSelector(err.Error()); sel != "" {
			t.Errorf("%s: names %s, as the engine does: %v", name, sel, err)
		}
	}
}
