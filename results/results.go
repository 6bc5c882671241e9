// Package results is the data dbsock produces: one Run per target,
// scenario, transport and round, each with its latency histogram, and the
// Summary that pools rounds per transport. It is also the JSON contract
// (SchemaVersion) that CI users read; renderers live in package report.
package results

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/internal/sysinfo"
)

// SchemaVersion is the version of the JSON layout. Fields may be added
// without changing it; renaming or removing one changes it. Version 2
// holds each case as its sides and comparisons; ReadJSON reads version 1
// too (TCP, Unix and the Unix speedups as named fields, further paths in
// "paths").
const SchemaVersion = 2

// Report is everything one dbsock run measured and the conditions it ran in.
type Report struct {
	SchemaVersion int         `json:"schema_version"`
	Tool          Tool        `json:"tool"`
	StartedAt     time.Time   `json:"started_at"`
	FinishedAt    time.Time   `json:"finished_at"`
	Environment   Environment `json:"environment"`
	Config        Config      `json:"config"`
	Targets       []Target    `json:"targets"`
	Runs          []Run       `json:"runs"`
	Summary       []Summary   `json:"summary"`
	// Stacks compare client stacks' speedups with each other, per case
	// measured from several (stacks.go).
	Stacks []StackComparison `json:"stacks,omitempty"`
	// Objectives are each path's highest rate within the run's objective
	// (Config.SLO), per group of cases measured at several rates (slo.go).
	Objectives []SLOResult `json:"objectives,omitempty"`
	// Plot is the image written with the report (--plot), if any.
	Plot string `json:"plot,omitempty"`
	// Thresholds are the --threshold checks and how they came out.
	Thresholds []ThresholdResult `json:"thresholds,omitempty"`
}

// ThresholdResult is one threshold checked against one summary.
type ThresholdResult struct {
	Expr     string `json:"expr"`
	Scenario string `json:"scenario,omitempty"`
	// Stack is the client stack of the case checked ("" for Go's).
	Stack string `json:"stack,omitempty"`
	OK    bool   `json:"ok"`
	// Actual is the value checked; null when there is none (an interval
	// bound asked of a case with too few block pairs): the threshold then
	// fails, and ActualText says why.
	Actual     *float64 `json:"actual"`
	ActualText string   `json:"actual_text"`
}

// Tool names the measuring program (filled by package sysinfo).
type Tool = sysinfo.Tool

// Environment describes the machine the client ran on (filled by package
// sysinfo).
type Environment = sysinfo.Environment

// Target records one target's server and what one op on it is.
type Target struct {
	Name string `json:"target"`
	// Layer, when set, says which layer of --explain's decomposition this
	// target measures (drivers.LayerKernel, drivers.LayerRuntime).
	Layer string `json:"layer,omitempty"`
	// Provenance is where the server came from, as its provider said.
	drivers.Provenance
	// Warnings say what makes this server's numbers not what they would
	// be for another (its provider's, Provenance.Warnings, among them).
	Warnings  []Warning          `json:"warnings,omitempty"`
	Server    drivers.ServerInfo `json:"server"`
	Operation string             `json:"operation,omitempty"`
	// ConnectPhase says what the connect scenario's connect phase covers.
	ConnectPhase string             `json:"connect_phase,omitempty"`
	Endpoints    []drivers.Endpoint `json:"endpoints,omitempty"`
	// ServerCPUs are the CPUs the server process may run on, read back from
	// the OS; "" when dbsock does not control the server (external).
	ServerCPUs string `json:"server_cpus,omitempty"`
	// Client, when set, is where dbsock's client ran other than in the
	// dbsock process itself (--client container): the timing loop ran
	// there.
	Client string `json:"client,omitempty"`
	// Rows is how many rows this target's ops chose from, when that is not
	// the workload's Rows: the user's keys (--keys-from), or fewer where
	// the server reads many too slowly (0: the workload's).
	Rows int `json:"rows,omitempty"`
	// Skipped are the client stacks asked for (run --clients) that this
	// target was not measured from, each with its reason.
	Skipped []SkippedClient `json:"skipped_clients,omitempty"`
	// Error is why the target could not be measured completely.
	Error string `json:"error,omitempty"`

	err error // Error's error, where it was measured in this process (Fail)
}

// Latency is a latency distribution in nanoseconds.
type Latency struct {
	Min    int64   `json:"min"`
	P50    int64   `json:"p50"`
	P90    int64   `json:"p90"`
	P99    int64   `json:"p99"`
	P999   int64   `json:"p999"`
	Max    int64   `json:"max"`
	Mean   float64 `json:"mean"`
	StdDev float64 `json:"stddev"`
}

// Case is one point of a sweep: what was measured, with which settings.
// Every run and summary carries its case.
type Case struct {
	Target   string `json:"target"`
	Scenario string `json:"scenario"`
	// Concurrency is the number of workers, each with its own connection.
	Concurrency int `json:"concurrency"`
	// ValueSize is the size in bytes of the value each lookup returns.
	ValueSize int `json:"value_size"`
	// Mode is the driver setting that changes round trips, e.g.
	// "prepared", "resp3", "find".
	Mode string `json:"mode,omitempty"`
	// Op is "update" when each op writes its row (--op update); "" for
	// reads. Under --op mixed a case's reads ("read") and its writes
	// ("update") are two cases of the same Mix.
	Op string `json:"op,omitempty"`
	// Mix is --op mixed's R/W (e.g. "95/5"): the case is the reads or the
	// writes of that mix, timed interleaved. "" otherwise.
	Mix string `json:"mix,omitempty"`
	// OwnQuery says the op is the user's own (--query), whose reply size
	// dbsock does not choose.
	OwnQuery bool `json:"own_query,omitempty"`
	// Rate is the open-loop target rate in ops/s per transport; 0 means
	// closed loop (each op starts when the previous one ends).
	Rate float64 `json:"rate"`
	// Pipeline is how many lookups one op sends together in one round
	// trip; 0 means one lookup per op.
	Pipeline int `json:"pipeline,omitempty"`
	// Stack is the client stack whose agent did the ops, as --clients
	// names it (its directory under agents/, with :LIBRARY where one was
	// asked for); "" for Go's drivers in dbsock itself.
	Stack string `json:"stack,omitempty"`
	// Placement, in a run under several placements (Config.Placements),
	// is the mode of the one the case was measured under ("same",
	// "split"); "" otherwise (Config.Placement is the run's).
	Placement string `json:"placement,omitempty"`
}

// Label names the case for people, e.g. "pk, 16 workers, 1 KiB".
func (c Case) Label() string {
	s := c.Scenario
	if c.Mode != "" {
		s += " (" + c.Mode + ")"
	}
	if c.Concurrency > 1 {
		s += fmt.Sprintf(", %d workers", c.Concurrency)
	}
	switch {
	case c.OwnQuery && c.Op != "":
		s += ", " + c.Op + "s by your own query"
	case c.OwnQuery:
		s += ", your own query"
	case c.Op != "":
		s += ", " + c.Op + "s"
		if c.Mix != "" {
			s += " of a " + c.Mix + " mix"
		}
	default:
		s += ", " + FormatSize(c.ValueSize) + " values"
	}
	if c.Rate > 0 {
		s += fmt.Sprintf(", open loop at %g ops/s", c.Rate)
	}
	if c.Pipeline > 1 {
		s += fmt.Sprintf(", pipeline %d", c.Pipeline)
	}
	if c.Stack != "" {
		s += ", from " + c.Stack
	}
	if c.Placement != "" {
		s += ", placed " + PlacementName(c.Placement)
	}
	return s
}

// PlacementName is the name a report gives placement mode m: "shared"
// for same (client and servers on one CPU), else m.
func PlacementName(m string) string {
	if m == "same" {
		return "shared"
	}
	return m
}

// Lookups is how many lookups one op of the case makes.
func (c Case) Lookups() int { return max(c.Pipeline, 1) }

// FormatSize renders a byte count as 16 B, 1 KiB, 64 KiB, 1 MiB.
func FormatSize(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d B", n)
}

// Run is one timed loop: one case, transport and round.
type Run struct {
	Case
	// Client is the client stack that did the run's ops, where known.
	Client    *Client           `json:"client,omitempty"`
	Transport drivers.Transport `json:"transport"`
	// Instance numbers the server instance the run measured (1 for the
	// first; 0 in reports from before --instances): with --instances K
	// each server is restarted between instances.
	Instance int   `json:"instance,omitempty"`
	Round    int   `json:"round"`
	N        int64 `json:"n"`
	Errors   int64 `json:"errors"`
	Connection
	Timing
	Failure
	// Histogram is the run's HdrHistogram in its compressed V2 encoding
	// (base64), so that a saved report can be re-rendered or pooled.
	Histogram string `json:"histogram,omitempty"`
	// DistinctKeys is how many distinct rows the run's timed ops read (0
	// when the target reads no rows).
	DistinctKeys int64 `json:"distinct_keys,omitempty"`
	// Writes is how many writes the run's ops made on the server, warm-up
	// included (with --op update; 0 for reads): the counters it increments
	// add up to it.
	Writes int64 `json:"writes,omitempty"`
	// Phases are the parts of an op timed on their own where the scenario
	// has them (connect: "connect" and "query"), and, in open-loop mode,
	// "uncorrected": latency from the actual start instead of the intended
	// one. Latency is always the whole op (from the intended start).
	Phases map[string]Phase `json:"phases,omitempty"`
	// Blocks are the run's stretches of consecutive ops, in the order they
	// ran; the run's latency pools them. Reports without blocks (older
	// dbsock) count each run as one block.
	Blocks []Block `json:"blocks,omitempty"`
	// CPU is the CPU time and context switches both sides spent over the
	// run's timed blocks (read at each block's edges); nil when not read.
	CPU *CPU `json:"cpu,omitempty"`
	// ServerExec is what the server says it spent executing the lookups
	// over the run's timed blocks; nil where the server does not say.
	ServerExec *ServerExec `json:"server_exec,omitempty"`
	// Generator is how the open loop kept its schedule (a run at --rate);
	// nil for a closed loop.
	Generator *Generator `json:"generator,omitempty"`
	// EndedBy, on the last round of a case, says what ended the case:
	// "rounds" (the planned rounds ran), "precision" (--precision was
	// reached) or "max-duration" (--max-duration passed first).
	EndedBy string `json:"ended_by,omitempty"`

	// hist is Histogram decoded, when the run was measured in this process
	// (nil when read from JSON): Summarize pools it without decoding.
	hist *hdrhistogram.Histogram
}

// Connection is what a run connected to and how dbsock knows its ops went
// over the run's transport (JSON holds it as the Run's).
type Connection struct {
	Endpoint          drivers.Endpoint `json:"endpoint"`
	TransportVerified bool             `json:"transport_verified"`
	Evidence          string           `json:"transport_evidence,omitempty"`
	// Negotiated is what the run's first connection negotiated (its TLS
	// session, the server's authentication method), where known.
	Negotiated *drivers.Negotiated `json:"negotiated,omitempty"`
	Server     drivers.ServerInfo  `json:"server"`
}

// Timing is a run's timed ops as a whole: their latencies, throughput and
// wall time (JSON holds it as the Run's).
type Timing struct {
	Latency   Latency `json:"latency_ns"`
	OpsPerSec float64 `json:"ops_per_sec"`
	ElapsedNs int64   `json:"elapsed_ns"`
}

// Failure is a run that stopped before its N ops, and why (JSON holds it
// as the Run's).
type Failure struct {
	// Incomplete marks a run that stopped before its N ops; Error says why.
	Incomplete bool   `json:"incomplete,omitempty"`
	Error      string `json:"error,omitempty"`
	// Disbelieved marks a run whose client's report an audit refused: what
	// it said of its ops disagreed with what dbsock or the server saw
	// (drivers.ErrDisbelieved). Every run of its case is then void
	// (Report.Summarize): no figure of the case is shown.
	Disbelieved bool `json:"disbelieved,omitempty"`
}

// SetHistogram records h as the run's histogram, encoded for JSON and kept
// as it is for summaries in this process.
func (r *Run) SetHistogram(h *hdrhistogram.Histogram) error {
	enc, err := EncodeHistogram(h)
	if err != nil {
		return err
	}
	r.Histogram, r.hist = enc, h
	return nil
}

// Hist returns the run's histogram, decoding it only when the run was read
// from JSON; nil when the run has none.
func (r *Run) Hist() (*hdrhistogram.Histogram, error) {
	if r.hist != nil || r.Histogram == "" {
		return r.hist, nil
	}
	return DecodeHistogram(r.Histogram)
}

// Block is one stretch of consecutive ops on one transport within a round.
// Blocks of the two transports alternate in pairs, so that each pair saw
// the machine in about the same state; the speedup is estimated from pairs.
type Block struct {
	// Pair is the pair's index within its round, from 0; the TCP and Unix
	// blocks with the same round and pair form one pair.
	Pair int `json:"pair"`
	// Index is the block's position among all blocks of its round (both
	// transports), from 0.
	Index int `json:"index"`
	// StartNs is when the block started, as an offset from the report's
	// started_at; ElapsedNs its wall time.
	StartNs   int64   `json:"start_ns"`
	ElapsedNs int64   `json:"elapsed_ns"`
	N         int64   `json:"n"`
	Errors    int64   `json:"errors"`
	P50       int64   `json:"p50_ns"`
	Mean      float64 `json:"mean_ns"`
	P99       int64   `json:"p99_ns"`
	// LagP50Ns and LagP99Ns are the block's schedule lag in an open loop
	// (Generator): each op's actual start minus its intended start.
	LagP50Ns int64 `json:"lag_p50_ns,omitempty"`
	LagP99Ns int64 `json:"lag_p99_ns,omitempty"`
	// LateP99Ns is the generator's own share of the lag (Generator).
	LateP99Ns int64 `json:"late_p99_ns,omitempty"`
	// ServerCPUNs is the CPU time the server spent over the block, where
	// it was read (the capacity comparison pairs it per op).
	ServerCPUNs int64 `json:"server_cpu_ns,omitempty"`
	// Noisy marks a block whose p50 is far from its transport's other
	// blocks of the case (robust z-score, see NoisyZ).
	Noisy bool `json:"noisy,omitempty"`
}

// WriteJSON writes r as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encode report as JSON: %w", err)
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// ReadJSON reads a report written by WriteJSON, by this dbsock or by one
// that wrote schema version 1.
func ReadJSON(rd io.Reader) (*Report, error) {
	lr := &io.LimitedReader{R: rd, N: MaxReportBytes + 1}
	dec := json.NewDecoder(lr)
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		if lr.N <= 0 {
			return nil, fmt.Errorf("the report is larger than %d MiB, far more than dbsock writes; is it a report?", MaxReportBytes>>20)
		}
		return nil, fmt.Errorf("decode report JSON: %w", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("decode report JSON: trailing data after the report")
	}
	var r Report
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, fmt.Errorf("decode report JSON: %w", err)
	}
	v1 := r.SchemaVersion == 1
	switch r.SchemaVersion {
	case SchemaVersion:
	case 1:
		if err := r.fromV1(raw); err != nil {
			return nil, fmt.Errorf("decode report JSON (schema_version 1): %w", err)
		}
	default:
		return nil, fmt.Errorf("report has schema_version %d; this dbsock reads 1 and %d", r.SchemaVersion, SchemaVersion)
	}
	if err := r.check(v1); err != nil {
		return nil, fmt.Errorf("decode report JSON: %w", err)
	}
	return &r, nil
}

// MaxReportBytes bounds a report ReadJSON reads: dbsock's own reports,
// histograms included, stay far below it, and a larger file would take
// memory out of all proportion.
const MaxReportBytes = 64 << 20

// Equal reports whether two reports encode to the same JSON.
func Equal(a, b *Report) bool {
	var ba, bb bytes.Buffer
	return a.WriteJSON(&ba) == nil && b.WriteJSON(&bb) == nil && bytes.Equal(ba.Bytes(), bb.Bytes())
}

// LayerTarget names the target that measured layer of --explain's
// decomposition (drivers.LayerKernel, drivers.LayerRuntime), or "". Reports
// written before targets carried their layer name them by the targets'
// names, which were the same as today's.
func (r *Report) LayerTarget(layer string) string {
	for _, t := range r.Targets {
		if t.Layer == layer {
			return t.Name
		}
	}
	legacy := map[string]string{drivers.LayerKernel: "floor", drivers.LayerRuntime: "echo"}
	for _, t := range r.Targets {
		if t.Layer == "" && t.Name == legacy[layer] {
			return t.Name
		}
	}
	return ""
}
