package scenarios

import (
	"context"
	"time"
)

// Pacer is the open loop's wait for an op's due time (a timerfd on Linux:
// pace_linux.go) for a loop outside this package: dbsock's own Go agent
// (dbsock agent) paces a load's connections with it as the timing loop
// paces its own. One goroutine at a time uses a Pacer.
type Pacer struct{ p *pacer }

// NewPacer makes a Pacer; Stop releases it.
func NewPacer() *Pacer { return &Pacer{p: newPacer()} }

// WaitUntil returns at t (or as soon after as the goroutine runs); a
// cancelled ctx cuts the wait short (its error is returned).
func (p *Pacer) WaitUntil(ctx context.Context, t time.Time) error { return p.p.waitUntil(ctx, t) }

// Stop releases the Pacer.
func (p *Pacer) Stop() { p.p.stop() }
