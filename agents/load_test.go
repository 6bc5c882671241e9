package agents

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// TestHelloCapabilities: a hello of protocol 2 must name the families it
// speaks, each a family's name, and only known worker models; protocol 1 says
// nothing and is refused a load, saying what changed.
func TestHelloCapabilities(t *testing.T) {
	v2 := func(c *Capabilities) Hello { return Hello{Protocol: 2, Library: "lib", Capabilities: c} }
	for name, tc := range map[string]struct {
		h    Hello
		want string
	}{
		"no capabilities": {v2(nil), "protocol 2 says its capabilities"},
		"no families":     {v2(&Capabilities{}), "protocol 2 says its capabilities"},
		"bad family":      {v2(&Capabilities{Families: []string{"Wire 9"}}), `protocol family "Wire 9" is not a family's name`},
		"unknown model":   {v2(&Capabilities{Families: []string{"kv"}, Workers: "fibers"}), `workers "fibers" is not a worker model`},
		"v1":              {Hello{Protocol: 1}, ""},
		"v2":              {v2(&Capabilities{Families: []string{"kv"}, Workers: "threads"}), ""},
	} {
		err := tc.h.checkCapabilities()
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: %v; want %q", name, err, tc.want)
		}
	}
	if err := (Hello{Protocol: 1}).CanLoad(2, false); !errors.Is(err, ErrProtocol1) {
		t.Errorf("protocol 1 at load: %v", err)
	}
	c := &Capabilities{Families: []string{"kv"}, Workers: "threads", MaxConnections: 8}
	for _, tc := range []struct {
		conns int
		paced bool
		want  string
	}{{8, false, ""}, {9, false, "8 connections at most; 9 were asked for"}, {2, true, "does not pace a load"}} {
		err := v2(c).CanLoad(tc.conns, tc.paced)
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("CanLoad(%d, %v): %v; want %q", tc.conns, tc.paced, err, tc.want)
		}
	}
	if err := v2(c).Speaks("sql", "tcp"); err == nil || !strings.Contains(err.Error(), "not sql") {
		t.Errorf("Speaks postgres: %v", err)
	}
	if err := v2(c).Speaks("kv", "tls"); err == nil || !strings.Contains(err.Error(), "cannot open TLS") {
		t.Errorf("Speaks redis over tls: %v", err)
	}
}

// TestCheckLoadResult: a load's answer is checked against the request
// and dbsock's clock: one result per connection in order, one latency
// (and lag, paced) per key, and no op ending, by its own schedule, after
// the request returned.
func TestCheckLoadResult(t *testing.T) {
	a := &Agent{spec: Spec{Stack: "x"}}
	l := Load{IDs: []string{"tcp-1", "tcp-2"}, Keys: [][]any{{"a", "b"}, {"c", "d"}}, IntervalNs: 1e6, OffsetsNs: []int64{0, 5e5}}
	ok := ConnResult{ID: "tcp-2", Ns: []int64{10e3, 10e3}, LagNs: []int64{1e3, 2e3}}
	if err := a.checkConnResult(l, 1, &ok, 10*time.Millisecond); err != nil {
		t.Errorf("a good result: %v", err)
	}
	for name, tc := range map[string]struct {
		r    ConnResult
		wall time.Duration
		want string
	}{
		"other id":     {ConnResult{ID: "tcp-1", Ns: ok.Ns, LagNs: ok.LagNs}, time.Second, `names "tcp-1"`},
		"short":        {ConnResult{ID: "tcp-2", Ns: ok.Ns[:1], LagNs: ok.LagNs[:1]}, time.Second, "1 latencies for 2 keys: one per key is the protocol, unless 10 ops in a row failed"},
		"no lag":       {ConnResult{ID: "tcp-2", Ns: ok.Ns}, time.Second, "0 lags for 2 ops"},
		"negative lag": {ConnResult{ID: "tcp-2", Ns: ok.Ns, LagNs: []int64{-1, 0}}, time.Second, "lag: latency 0 is -1 ns"},
		"under floor":  {ConnResult{ID: "tcp-2", Ns: []int64{1000, 1000}, LagNs: ok.LagNs}, time.Second, "less than a round trip"},
		"late":         {ok, 1400 * time.Microsecond, "op 1 was due 1.5ms after the load began"},
		"error index":  {ConnResult{ID: "tcp-2", Ns: ok.Ns, LagNs: ok.LagNs, Errors: []OpError{{Index: 2}}}, time.Second, "error at op 2 of 2"},
	} {
		r := tc.r
		err := a.checkConnResult(l, 1, &r, tc.wall)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v; want %q", name, err, tc.want)
		}
	}
	if _, err := checkLoad(Load{IDs: []string{"a"}, Keys: [][]any{make([]any, MaxOps)}, Warmup: 1}); err == nil {
		t.Error("a load over MaxOps was not refused")
	}
	if got := (Load{IDs: l.IDs, Keys: l.Keys, IntervalNs: 1e6, OffsetsNs: []int64{0, 5e5}}).schedule(); got != 1500*time.Microsecond {
		t.Errorf("schedule %s; want the last op's due time, 1.5ms", got)
	}
}
