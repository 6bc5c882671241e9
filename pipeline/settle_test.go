package pipeline

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/dbsock/dbsock/internal/cpustat"
)

// scriptedMeter's CPU time grows by busy[i] before its i-th read after the
// first, and by the last entry from then on.
type scriptedMeter struct {
	busy  []time.Duration
	reads int
	total int64
	err   error
}

func (m *scriptedMeter) Read() (cpustat.Sample, error) {
	if m.reads > 0 {
		m.total += int64(m.busy[min(m.reads-1, len(m.busy)-1)])
	}
	m.reads++
	return cpustat.Sample{CPUNs: m.total}, m.err
}

func (*scriptedMeter) Describe() string { return "scripted" }

func TestSettle(t *testing.T) {
	const window = time.Millisecond
	for _, tc := range []struct {
		name      string
		busy      []time.Duration
		err       error
		limit     time.Duration
		idle      bool
		wantReads int
	}{
		// 5% of a 1 ms window is 50 µs: 49 µs is idle, 50 µs is not.
		{"idle at once", []time.Duration{0}, nil, time.Second, true, 2},
		{"just under 5%", []time.Duration{49 * time.Microsecond}, nil, time.Second, true, 2},
		{"busy three windows, then idle", []time.Duration{50 * time.Microsecond, time.Millisecond, 200 * time.Microsecond, 0}, nil, time.Second, true, 5},
		{"never idle", []time.Duration{time.Millisecond}, nil, 20 * time.Millisecond, false, -1},
		{"meter fails", []time.Duration{0}, errors.New("gone"), time.Second, false, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &scriptedMeter{busy: tc.busy, err: tc.err}
			waited, idle := settleWithin(context.Background(), m, window, tc.limit)
			if idle != tc.idle {
				t.Fatalf("idle = %v after %s and %d reads, want %v", idle, waited, m.reads, tc.idle)
			}
			if tc.wantReads >= 0 && m.reads != tc.wantReads {
				t.Errorf("%d reads, want %d", m.reads, tc.wantReads)
			}
			if !tc.idle && tc.err == nil && waited < tc.limit {
				t.Errorf("gave up after %s, before its limit %s", waited, tc.limit)
			}
		})
	}
	if waited, idle := settle(context.Background(), nil); waited != 0 || !idle {
		t.Errorf("settle without a meter: %s, %v; want 0 and idle", waited, idle)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, idle := settleWithin(ctx, &scriptedMeter{busy: []time.Duration{time.Second}}, window, time.Hour); idle {
		t.Error("a cancelled run's settle says idle")
	}
}
