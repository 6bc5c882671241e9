package scenarios

import (
	"fmt"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/internal/setting"
	"github.com/dbsock/dbsock/results"
)

// ClientBudget is the most a case may hold in dbsock's own process: its
// workers' latency histograms and connections, and the values of its ops
// in flight. With the Go runtime's own share (a soft limit keeps its
// garbage near what is live) a run stays under 1 GiB.
const ClientBudget = 640 << 20

// ConnBytes is what dbsock counts for one open connection on its side: a
// client library's buffers (go-redis keeps 32 KiB to read and 32 KiB to
// write) and its bookkeeping, rounded up from what a run of the redis
// target with 400 workers holds per connection beyond its histograms.
const ConnBytes = 128 << 10

// CopiesPerValue is how many copies of a value in flight dbsock holds at
// once: the socket's read buffer, the client library's, and the one it
// checks.
const CopiesPerValue = 3

// histogramBytes is what one latency histogram holds.
var histogramBytes = int64(results.NewHistogram().ByteSize())

// MemoryError is a case that would hold more than ClientBudget in dbsock:
// too many workers (Concurrency), too deep a pipeline or too large values.
type MemoryError struct {
	Workers, Depth int
	ValueSize      int64
	// Bytes is what the case would hold: WorkerBytes for each worker, and
	// ValueBytes of values in flight.
	Bytes, WorkerBytes, ValueBytes int64
	// MaxWorkers is the most workers that fit at this depth and size.
	MaxWorkers int
}

func (e *MemoryError) Error() string {
	lower := fmt.Sprintf("at most %d workers fit: lower Concurrency, the pipeline depth or the value size", e.MaxWorkers)
	if e.MaxWorkers == 0 {
		lower = "even one worker does not fit: lower the pipeline depth or the value size"
	}
	return fmt.Sprintf("%d workers (Concurrency) would hold about %s in dbsock: %s per worker in latency histograms and connections (one per path) and %s of values in flight (pipeline depth %d, values of %s, %d copies each); the limit is %s: %s",
		e.Workers, setting.Bytes(e.Bytes), setting.Bytes(e.WorkerBytes), setting.Bytes(e.ValueBytes), e.Depth,
		setting.Bytes(e.ValueSize), CopiesPerValue, setting.Bytes(ClientBudget), lower)
}

// CheckMemory fails with a *MemoryError when case c with these settings, with
// values of valueSize bytes and pipelines depth deep, measuring paths
// paths (2 when fewer), would hold more than ClientBudget in dbsock at
// once.
func (o Settings) CheckMemory(c Case, valueSize int64, depth, paths int) error {
	depth = max(depth, 1)
	paths = max(paths, MinPaths)
	valueSize = max(valueSize, 1)
	perWorker := o.workerBytes(c, paths) + int64(depth)*valueSize*CopiesPerValue
	if bytes := int64(c.workers()) * perWorker; bytes > ClientBudget {
		return &MemoryError{Workers: c.workers(), Depth: depth, ValueSize: valueSize, Bytes: bytes,
			WorkerBytes: o.workerBytes(c, paths), ValueBytes: int64(c.workers()) * int64(depth) * valueSize * CopiesPerValue,
			MaxWorkers: int(ClientBudget / perWorker)}
	}
	return nil
}

// workerBytes is what one worker holds for its paths: each path's
// histograms (one per part of the op, the connect scenario's phases and
// its warm-up's, the open loop's uncorrected latencies) and connection.
func (o Settings) workerBytes(c Case, paths int) int64 {
	hists := int64(1)
	if o.Op == drivers.OpMixed {
		hists = 2
	}
	if c.Scenario == Connect {
		hists += 7 // connect, query and connect's three parts; the warm-up's connect and query
	}
	if o.Rate > 0 {
		hists++
	}
	return int64(paths) * (hists*histogramBytes + ConnBytes)
}
