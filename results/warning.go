package results

import (
	"encoding/json"

	"github.com/dbsock/dbsock/internal/setting"
)

// WarningKind says which warning a Warning is.
type WarningKind string

// The warnings dbsock gives about a case (Summary.Warnings) or a target
// (Target.Warnings).
const (
	// RoundsDiffer: a path's p50 speedup moved between rounds; more
	// rounds average over it (setting.Rounds).
	RoundsDiffer WarningKind = "rounds_differ"
	// WideMiddle: a path's middle half of latencies is wide, likely two
	// modes; pinning helps (setting.Placement).
	WideMiddle WarningKind = "wide_middle"
	// NoisyMachine: more than NoisyShare of the blocks were far from
	// their path's typical p50.
	NoisyMachine WarningKind = "noisy_machine"
	// UnpinnedServer: dbsock pinned its client but not the user's server
	// (setting.Placement).
	UnpinnedServer WarningKind = "unpinned_server"
	// KeysCut: the user's keys query returned more keys than the rows
	// measured (setting.Rows).
	KeysCut WarningKind = "keys_cut"
	// RowsLimited: the server reads many rows too slowly, so the target
	// read fewer than asked (setting.Rows).
	RowsLimited WarningKind = "rows_limited"
	// NotRestarted: a server dbsock did not start was not restarted
	// between instances (setting.Instances).
	NotRestarted WarningKind = "not_restarted"
	// PathNotMeasured: the server has no endpoint on a path asked for.
	PathNotMeasured WarningKind = "path_not_measured"
	// StackWithoutTLS: a client stack has no TLS to the target.
	StackWithoutTLS WarningKind = "stack_without_tls"
	// AgentsWord: an agent's latencies were checked against dbsock's
	// clock only: the server keeps no count of its ops that dbsock reads.
	AgentsWord WarningKind = "agents_word"
	// Said is a warning known only by its words: one read from a report
	// file, or a server provider's.
	Said WarningKind = "said"
)

// Warning is why numbers may not be solid: its Kind and its words. The
// words name the settings the warning advises on as the engine's fields
// (Settings) until whoever shows the report words them for its reader
// (Word: dbsock run as its flags, dbsock.Compare as CompareOptions'
// fields). JSON holds a warning as its words.
type Warning struct {
	Kind WarningKind
	msg  setting.Message
	text string // the words Word gave it, or those it was read with
}

// Warn is a warning of kind; args that are setting.Fields are the settings
// it names, the others are formatted as fmt.Sprintf does.
func Warn(kind WarningKind, format string, args ...any) Warning {
	return Warning{Kind: kind, msg: setting.Msg(format, args...)}
}

// Says is a warning known only by its words (kind Said): nothing in it is
// worded again.
func Says(text string) Warning { return Warning{Kind: Said, text: text} }

// String is the warning's words: as Word last worded them, or naming the
// engine's fields.
func (w Warning) String() string {
	if w.text != "" || w.msg.IsZero() {
		return w.text
	}
	return w.msg.String()
}

// In is the warning worded with name for every setting it names; a warning
// known only by its words keeps them.
func (w Warning) In(name setting.Namer) string {
	if w.msg.IsZero() {
		return w.text
	}
	return w.msg.In(name)
}

// Settings lists the settings the warning advises on.
func (w Warning) Settings() []setting.Field { return w.msg.Fields() }

// Word words w for a reader with name (In): its String, and its JSON, are
// those words from now on.
func (w *Warning) Word(name setting.Namer) {
	if !w.msg.IsZero() {
		w.text = w.msg.In(name)
	}
}

// MarshalJSON writes the warning's words (String).
func (w Warning) MarshalJSON() ([]byte, error) { return json.Marshal(w.String()) }

// UnmarshalJSON reads a warning's words, as a warning of kind Said.
func (w *Warning) UnmarshalJSON(b []byte) error {
	var text string
	if err := json.Unmarshal(b, &text); err != nil {
		return err
	}
	*w = Says(text)
	return nil
}

// Texts is each warning's words, in order.
func Texts(ws []Warning) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = w.String()
	}
	return out
}

// Word words every warning of r, and each target's error, for a reader
// with name: dbsock run names its flags, dbsock.Compare its options. A
// report read from a file keeps the words it was written with.
func (r *Report) Word(name setting.Namer) {
	for i := range r.Summary {
		for j := range r.Summary[i].Warnings {
			r.Summary[i].Warnings[j].Word(name)
		}
	}
	for i := range r.Targets {
		t := &r.Targets[i]
		for j := range t.Warnings {
			t.Warnings[j].Word(name)
		}
		if t.err != nil {
			t.Error = setting.In(t.err, name)
		}
	}
}

// Fail records err as why the target could not be measured completely: its
// Error, which Word words again for a reader.
func (t *Target) Fail(err error) {
	t.err, t.Error = err, err.Error()
}
