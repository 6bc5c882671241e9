package scenarios

import (
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/results"
)

// TestRecordGroup: a paced connection's ops of a group block are recorded
// as Loop records its own: latency from the due time, from the start
// (uncorrected), lag, and lateness from when the op could start (its due
// time or the op before's end), here worked out by hand.
func TestRecordGroup(t *testing.T) {
	w := &worker{hists: []*hdrhistogram.Histogram{results.NewHistogram()}, lag: results.NewHistogram(), late: results.NewHistogram(),
		phases: map[string]*hdrhistogram.Histogram{PhaseUncorrected: results.NewHistogram()}}
	us := func(v int64) int64 { return v * 1000 }
	// op 0: due 0, starts 10 µs, ends 110 µs; op 1: due 1 ms, starts
	// 1.02 ms, ends 3.52 ms; op 2: due 2 ms, could start at 3.52 ms,
	// starts 3.53 ms (lag 1.53 ms, its own lateness 10 µs), ends 3.63 ms.
	r := drivers.GroupResult{Ns: []int64{us(100), us(2500), us(100)}, LagNs: []int64{us(10), us(20), us(1530)}}
	s, end := recordGroup(r, LoopConfig{Interval: time.Millisecond}, w)
	if s.Ops != 3 || s.Errors != 0 || end != us(3630) {
		t.Fatalf("sample %+v, end %d; want 3 ops ending at 3.63 ms", s, end)
	}
	near := func(what string, got, want int64) {
		t.Helper()
		if got < want*99/100 || got > want*101/100 {
			t.Errorf("%s %d; want %d", what, got, want)
		}
	}
	near("max corrected latency", w.hists[0].Max(), us(2520)) // op 1: 3.52 ms - 1 ms
	near("min corrected latency", w.hists[0].Min(), us(110))
	near("max uncorrected", w.phases[PhaseUncorrected].Max(), us(2500))
	near("max lag", w.lag.Max(), us(1530))
	near("max lateness", w.late.Max(), us(20)) // op 1's; op 2's is 10 µs
	// A failed op is counted, not recorded, and ten in a row end it.
	w2 := &worker{hists: []*hdrhistogram.Histogram{results.NewHistogram()}}
	fails := drivers.GroupResult{Ns: make([]int64, 12)}
	for i := range fails.Ns {
		fails.Ns[i] = us(50)
		fails.Failed = append(fails.Failed, drivers.OpFailure{Index: i, Message: "gone"})
	}
	s, _ = recordGroup(fails, LoopConfig{}, w2)
	if s.Ops != MaxConsecutiveErrors || s.Err == nil || w2.hists[0].TotalCount() != 0 {
		t.Errorf("failed ops: %+v, %d recorded; want the loop ended after %d", s, w2.hists[0].TotalCount(), MaxConsecutiveErrors)
	}
}
