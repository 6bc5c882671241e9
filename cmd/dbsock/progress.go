package main

import (
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// progress shows a bar on stderr while a run goes, when stderr is a
// terminal. The timing loop only adds to an atomic counter every 256 ops;
// the bar reads it from its own goroutine.
type progress struct {
	done  atomic.Int64
	bar   *progressbar.ProgressBar
	stop  chan struct{}
	wg    sync.WaitGroup
	total int64
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

func startProgress(w io.Writer, total int64) *progress {
	p := &progress{stop: make(chan struct{}), total: total}
	p.bar = progressbar.NewOptions64(total,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription("starting servers"),
		progressbar.OptionSetWidth(30),
		progressbar.OptionShowCount(),
		progressbar.OptionShowIts(),
		progressbar.OptionSetItsString("ops"),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionClearOnFinish(),
	)
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-p.stop:
				return
			case <-t.C:
				_ = p.bar.Set64(p.done.Load())
			}
		}
	}()
	return p
}

// Write takes the run's progress lines and shows the latest as the bar's
// description instead of printing it.
func (p *progress) Write(b []byte) (int, error) {
	line := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(string(b)), "dbsock: "))
	if i := strings.Index(line, ":"); i > 0 && len(line) > 60 {
		line = line[:60] + "…"
	}
	p.bar.Describe(line)
	return len(b), nil
}

func (p *progress) finish() {
	close(p.stop)
	p.wg.Wait()
	_ = p.bar.Finish()
}
