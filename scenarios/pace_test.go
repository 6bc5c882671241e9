package scenarios

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestPacer: a paced op never starts before it is due, a due time that
// passed returns at once, and a cancelled run ends a long wait.
func TestPacer(t *testing.T) {
	p := newPacer()
	defer p.stop()
	for _, d := range []time.Duration{-time.Millisecond, 0, 50 * time.Microsecond, 300 * time.Microsecond, 2 * time.Millisecond} {
		due := time.Now().Add(d)
		if err := p.waitUntil(context.Background(), due); err != nil {
			t.Fatalf("wait %s: %v", d, err)
		}
		if now := time.Now(); now.Before(due) {
			t.Errorf("wait %s returned %s before the op was due", d, due.Sub(now))
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, cancel)
	if err := p.waitUntil(ctx, time.Now().Add(time.Hour)); !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled wait of an hour: %v, want context.Canceled", err)
	}
}
