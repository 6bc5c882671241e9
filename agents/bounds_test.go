package agents

import (
	"strings"
	"testing"
	"time"
)

// blk is a block of n ops of op ns each whose agent took span.
func blk(n int, op int64, span time.Duration) sample {
	return sample{ops: n, sum: int64(n) * op, span: span}
}

// TestBoundsCoverage: a path's blocks are weighed by the median share of
// the agent's span their latencies cover, from minWindow blocks on; one
// block under a stall moves no median; small blocks are not weighed.
// Hand-computed: 300 ops of 30 µs in 9.5 ms cover 0.947; of 6 µs (the
// latencies divided by 5) 0.189.
func TestBoundsCoverage(t *testing.T) {
	honest := blk(300, 30_000, 9500*time.Microsecond)
	divided := blk(300, 6_000, 9500*time.Microsecond)
	stalled := blk(300, 30_000, 200*time.Millisecond) // covers 0.045
	for _, tc := range []struct {
		name   string
		blocks []sample
		want   string
	}{
		{"honest", []sample{honest, honest, honest, honest}, ""},
		{"one stall", []sample{honest, stalled, honest, honest}, ""},
		{"stalls in most blocks", []sample{stalled, stalled, honest, stalled}, ""},
		{"divided by 5", []sample{divided, divided, divided}, "cover at best 0.19 of the time it took for them on dbsock's clock, under 0.50"},
		{"two blocks say nothing yet", []sample{divided, divided}, ""},
		{"small blocks are not weighed", []sample{blk(10, 6_000, 9500*time.Microsecond), blk(10, 6_000, 9500*time.Microsecond), blk(10, 6_000, 9500*time.Microsecond)}, ""},
		{"short spans are not weighed", []sample{blk(100, 2_000, time.Millisecond), blk(100, 2_000, time.Millisecond), blk(100, 2_000, time.Millisecond)}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bounds
			var err error
			for _, s := range tc.blocks {
				if err = b.block("unix", s); err != nil {
					break
				}
			}
			checkErr(t, err, tc.want)
		})
	}
}

// TestBoundsGaps: the time an agent's span leaves uncovered per op is
// about the same on every path; a path whose latencies were shortened
// leaves more. Hand-computed: TCP 300 ops of 40 µs in 12.6 ms leave
// 2 µs per op; Unix of 30 µs in 9.6 ms leave 2 µs; Unix divided by 1.5
// (20 µs in 9.6 ms) leave 12 µs, 10 µs more than TCP, over the 2 µs +
// 15% of 20 µs = 5 µs allowed.
func TestBoundsGaps(t *testing.T) {
	tcp := blk(300, 40_000, 12600*time.Microsecond)
	unix := blk(300, 30_000, 9600*time.Microsecond)
	shortened := blk(300, 20_000, 9600*time.Microsecond)
	for _, tc := range []struct {
		name      string
		tcp, unix sample
		want      string
	}{
		{"honest", tcp, unix, ""},
		{"unix shortened", tcp, shortened, "it took at least 12µs more per op on unix than its latencies cover (the least of its last blocks) and 2µs on tcp"},
		{"stalls on one path", tcp, blk(300, 30_000, 30*time.Millisecond), ""},     // two of three Unix blocks stalled: 70 µs a op uncovered
		{"within the allowance", tcp, blk(300, 27_000, 9600*time.Microsecond), ""}, // 3 µs more, 2 + 4.05 allowed
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bounds
			var err error
			for i := range minWindow {
				if err = b.block("tcp", tc.tcp); err != nil {
					break
				}
				u := tc.unix
				if tc.name == "stalls on one path" && i == 1 {
					u = unix // the one Unix block of three without a stall
				}
				if err = b.block("unix", u); err != nil {
					break
				}
			}
			checkErr(t, err, tc.want)
		})
	}
}

// TestBoundsRepeat: a block whose latencies are another's, in any order,
// is refused; a short block may repeat by chance.
func TestBoundsRepeat(t *testing.T) {
	var b bounds
	ns := make([]int64, 20)
	for i := range ns {
		ns[i] = 30_000 + int64(i*7919%1000)
	}
	if err := b.repeat("unix-2", ns, len(ns)); err != nil {
		t.Fatal(err)
	}
	other := append([]int64(nil), ns...)
	other[3]++
	if err := b.repeat("tcp-1", other, len(other)); err != nil {
		t.Errorf("a block that differs by a nanosecond: %v", err)
	}
	shuffled := append([]int64(nil), ns...)
	shuffled[0], shuffled[19] = shuffled[19], shuffled[0]
	checkErr(t, b.repeat("tcp-3", shuffled, len(shuffled)), "its 20 latencies for tcp-3 are those it gave for unix-2")
	checkErr(t, b.repeat("tcp-5", ns[:10], 10), "")
	checkErr(t, b.repeat("tcp-5", ns[:10], 10), "")
}

// TestBoundsTail: a paced load is taken to have lasted until its last op
// ended, but no less than dbsock's span less the allowance; one load
// whose answer came long after its last op passes, a path whose every
// load did fails. Hand-computed for a 1 s span: taken no shorter than
// 1 s - (25 ms + 25 ms) = 950 ms; an end at 500 ms leaves (500 - 25) /
// 1000 = 47.5% of the span, over 10%.
func TestBoundsTail(t *testing.T) {
	for _, tc := range []struct {
		end, span, took time.Duration
	}{
		{990 * time.Millisecond, time.Second, 990 * time.Millisecond},
		{900 * time.Millisecond, time.Second, 950 * time.Millisecond},
		{500 * time.Millisecond, time.Second, 950 * time.Millisecond},
		{30 * time.Millisecond, 40 * time.Millisecond, 30 * time.Millisecond},
	} {
		var b bounds
		took, err := b.tail("tcp", tc.end, tc.span)
		if err != nil || took != tc.took {
			t.Errorf("tail(%s, %s) took %s, %v; want %s", tc.end, tc.span, took, err, tc.took)
		}
	}
	var b bounds
	var err error
	late, early := 500*time.Millisecond, 990*time.Millisecond
	ends := []time.Duration{late, early, late, late, late, late, late}
	for i, end := range ends {
		_, err = b.tail("tcp", end, time.Second)
		if err != nil && i < len(ends)-1 {
			t.Fatalf("load %d: %v, want none while one load of the last 5 ended in time", i, err)
		}
	}
	checkErr(t, err, "in each of its last 5 loads on tcp, at least 48% of the load's time on dbsock's clock (beyond 25ms) before its answer reached dbsock")
}

// TestBoundsLoadCoverage: at load in a closed loop, the busiest
// connection's latencies cover at least MinLoadCoverage of the span (the
// median of the path's last loads).
func TestBoundsLoadCoverage(t *testing.T) {
	var b bounds
	for range minWindow {
		if err := b.load("tcp", blk(1000, 400_000, time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	var err error
	for range minWindow {
		if err = b.load("unix", blk(1000, 80_000, time.Second)); err != nil {
			break
		}
	}
	checkErr(t, err, "the latencies of its busiest connection in its last 3 loads on unix cover at best 0.08")
}

func checkErr(t *testing.T, err error, want string) {
	t.Helper()
	switch {
	case want == "" && err != nil:
		t.Errorf("%v, want none", err)
	case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
		t.Errorf("%v, want %q", err, want)
	}
}
