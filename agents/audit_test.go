package agents

import (
	"math"
	"strings"
	"testing"
	"time"
)

// TestCheckWall: a block's latencies are believed only within the block's
// wall time on dbsock's clock and above a round trip; a failed op's
// latency may be short; int64-max latencies do not wrap the sum.
func TestCheckWall(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    BlockResult
		wall time.Duration
		want string // "" for none
	}{
		{"plausible", BlockResult{Ns: []int64{30000, 40000, 50000}}, 200 * time.Microsecond, ""},
		{"exactly the wall", BlockResult{Ns: []int64{100000, 100000}}, 200 * time.Microsecond, ""},
		{"over the wall", BlockResult{Ns: []int64{200000, 200000}}, 300 * time.Microsecond, "add up to more than the whole request took on dbsock's clock (300µs) by op 1"},
		{"1000 s in 3.2 ms", BlockResult{Ns: []int64{1e12}}, 3200 * time.Microsecond, "add up to more than"},
		{"int64 max", BlockResult{Ns: []int64{math.MaxInt64, math.MaxInt64}}, time.Hour, "by op 0"},
		{"under a round trip", BlockResult{Ns: []int64{30000, 1000}}, time.Second, "op 1 took 1000 ns by the agent's clock, less than a round trip"},
		{"a failed op may be short", BlockResult{Ns: []int64{30000, 10}, Errors: []OpError{{Index: 1, Message: "refused"}}}, time.Second, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkWall(tc.r, tc.wall)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("checkWall: %v, want none", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("checkWall: %v, want %q", err, tc.want)
			}
		})
	}
}

// TestHelloWait: an agent's hello is waited for at least DefaultHello,
// however short the op timeout (--op-timeout 100ms once gave an honest
// Python agent on a busy machine 2.1 s to start, and called it hung).
func TestHelloWait(t *testing.T) {
	for _, tc := range []struct {
		l    Limits
		want time.Duration
	}{
		{Limits{OpTimeout: 100 * time.Millisecond}, DefaultHello},
		{Limits{OpTimeout: time.Minute}, time.Minute + 2*time.Second},
		{Limits{OpTimeout: 100 * time.Millisecond, Hello: time.Second}, time.Second},
	} {
		if got := tc.l.hello(); got != tc.want {
			t.Errorf("%+v: hello within %s, want %s", tc.l, got, tc.want)
		}
	}
}
