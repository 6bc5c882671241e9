package pipeline

import (
	"context"
	"crypto/tls"
	"sync/atomic"
	"testing"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/supply"
)

// pathsProvider supplies fakeProvider's servers with the tcp6 and tls
// paths too.
type pathsProvider struct{ fakeProvider }

func (p *pathsProvider) Supply(ctx context.Context, t supply.Target) (*supply.Server, error) {
	srv, err := p.fakeProvider.Supply(ctx, t)
	if err != nil {
		return nil, err
	}
	srv.Set(drivers.Endpoint{Transport: drivers.TCP6, Address: "[::1]:1"},
		drivers.Endpoint{Transport: drivers.TLS, Address: "127.0.0.1:2", TLS: &tls.Config{ServerName: "127.0.0.1"}, TLSTrust: "a fake CA"})
	return srv, nil
}

// TestTotalOpsCountsEveryPath: the progress bar's total is the number of
// timed ops the run really does, with three paths and with four (it once
// counted two whatever --paths said).
func TestTotalOpsCountsEveryPath(t *testing.T) {
	for _, paths := range [][]drivers.Transport{
		{drivers.TCP, drivers.TLS, drivers.Unix},
		{drivers.TCP, drivers.TCP6, drivers.TLS, drivers.Unix},
	} {
		p := &pathsProvider{}
		pl := plan(&p.fakeProvider, &fakeDriver{name: "a"}, &fakeDriver{name: "b"})
		pl.Provider, pl.Paths, pl.Instances, pl.Sweep.Concurrency = p, paths, 2, []int{1}
		pl.Loop.N, pl.Loop.Warmup, pl.Loop.Rounds = 300, 5, 1
		var done atomic.Int64
		pl.Output.Progress = &done
		pl.Output.Log = testLog{t}
		rep, err := Run(context.Background(), pl)
		if err != nil {
			t.Fatal(err)
		}
		var runs int
		for _, r := range rep.Runs {
			if r.TransportVerified {
				runs++
			}
		}
		if want := 2 * 2 * len(paths); runs != want {
			t.Fatalf("%v: %d verified runs, want %d (2 targets x 2 instances x %d paths)", paths, runs, want, len(paths))
		}
		if got, want := pl.TotalOps(), done.Load(); got != want || want != int64(runs*300) {
			t.Errorf("%v: TotalOps %d, ops counted by the loop %d, want both %d", paths, got, want, runs*300)
		}
	}
}

type testLog struct{ t *testing.T }

func (l testLog) Write(b []byte) (int, error) { l.t.Logf("%s", b); return len(b), nil }
