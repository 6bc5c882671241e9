package results

// Client is the client stack that did a case's ops: its language, its
// runtime and the client library, as the stack's agent said in its hello
// (for Go: the Go release and the driver module dbsock was built with).
type Client struct {
	Language       string `json:"language"`
	RuntimeVersion string `json:"runtime_version"`
	Library        string `json:"library"`
	LibraryVersion string `json:"library_version"`
	// TimingOverheadNs is the agent's own cost of timing an op: the p50
	// of empty ops timed as it times an op, in nanoseconds (0: not
	// measured, as for Go, whose loop's cost dbsock's benchmarks give).
	TimingOverheadNs int64 `json:"timing_overhead_ns,omitempty"`
}

// SkippedClient is a client stack a target was not measured from, and why
// (no client library for it in that stack, or the stack not installed).
type SkippedClient struct {
	Stack  string `json:"stack"`
	Reason string `json:"reason"`
}
