// Package setting words errors about a run's settings: the engine names the
// fields a library user sets (Plan.Loop.N, Plan.Instances), and whoever
// faces a person names them in that person's terms (dbsock run: its
// flags; dbsock.Compare: CompareOptions' fields).
package setting

import (
	"errors"
	"fmt"
	"strings"
)

// Field names one setting by its Go selector, as a user of the engine sets
// it: "Plan.Loop.N" is field N of pipeline.Plan's Loop (a
// scenarios.Settings), "Plan.Instances" is field Instances of
// pipeline.Plan.
type Field string

// The engine's settings that its errors name.
const (
	N           Field = "Plan.Loop.N"
	Warmup      Field = "Plan.Loop.Warmup"
	Rounds      Field = "Plan.Loop.Rounds"
	Blocks      Field = "Plan.Loop.Blocks"
	Duration    Field = "Plan.Loop.Duration"
	Rate        Field = "Plan.Loop.Rate"
	Precision   Field = "Plan.Loop.Precision"
	MaxDuration Field = "Plan.Loop.MaxDuration"
	OpTimeout   Field = "Plan.Loop.OpTimeout"
	Rows        Field = "Plan.Workload.Rows"
	Op          Field = "Plan.Loop.Op"
	Scenario    Field = "Plan.Sweep.Scenarios"
	Concurrency Field = "Plan.Sweep.Concurrency"
	ValueSizes  Field = "Plan.Sweep.ValueSizes"
	Pipelines   Field = "Plan.Sweep.Pipelines"
	Instances   Field = "Plan.Instances"
	Provider    Field = "Plan.ProviderName"
	Thresholds  Field = "Plan.Gates.Thresholds"
	Queries     Field = "Plan.Workload.Queries"
	KeysFrom    Field = "Plan.Workload.KeysFrom"
	AllowWrites Field = "Plan.Workload.AllowWrites"
	Explain     Field = "Plan.Explain"
	MaxErrors   Field = "Plan.Gates.MaxErrorRate"
	FailFast    Field = "Plan.FailFast"
	Keys        Field = "Plan.Loop.Keys"
	Seed        Field = "Plan.Loop.Seed"
	Placement   Field = "Plan.Placement"
	ClientCPU   Field = "Plan.Placement.Client"
	ServerCPU   Field = "Plan.Placement.Server"
	ServerPID   Field = "Server.CPU"
	Client      Field = "Plan.Client.Remote"
	Paths       Field = "Plan.Paths"
	Baseline    Field = "Plan.Baseline"
	Clients     Field = "Plan.Client.Stacks"
	// ClientBinary is the dbsock a client container runs (supply.Client's
	// Binary).
	ClientBinary Field = "Client.Binary"
)

// Of names field of target's own settings (package targets' Settings of
// that target), e.g. Of("redis", "TLSCA") is "redis.Settings.TLSCA": for
// the layers below package targets, whose errors name a target's setting.
func Of(target, field string) Field { return Field(target + ".Settings." + field) }

// All lists every Field above, for those who word them (a test checks
// that each has a word).
var All = []Field{N, Warmup, Rounds, Blocks, Duration, Rate, Precision, MaxDuration, OpTimeout, Rows, Op,
	Scenario, Concurrency, ValueSizes, Pipelines, Instances, Provider, Thresholds, Queries, KeysFrom, AllowWrites, Explain, MaxErrors, FailFast, Keys, Seed, Placement, ClientCPU, ServerCPU, ServerPID, Client, Paths, Baseline, Clients, ClientBinary}

// Namer gives a field its name for a reader: a flag, an option's field.
type Namer func(Field) string

// Error is a run that cannot be carried out as set. Its Error names the
// fields; In words it for another reader.
type Error struct {
	format string
	args   []any
}

// Errorf makes an Error: args that are Fields are the settings named, the
// others are formatted as fmt.Errorf does (%w wraps).
func Errorf(format string, args ...any) error {
	return &Error{format: format, args: args}
}

func (e *Error) Error() string { return e.In(nil) }

// In words the error with name(f) for every Field f it names (the field's
// own name when name is nil or says "").
func (e *Error) In(name Namer) string { return e.render(name).Error() }

// Unwrap returns what the error wraps with %w, if anything.
func (e *Error) Unwrap() error { return errors.Unwrap(e.render(nil)) }

// Fields lists the settings the error names, in order (those of a Message
// it names among them).
func (e *Error) Fields() []Field { return fields(e.args) }

func fields(args []any) []Field {
	var fs []Field
	for _, a := range args {
		switch v := a.(type) {
		case Field:
			fs = append(fs, v)
		case Message:
			fs = append(fs, v.Fields()...)
		}
	}
	return fs
}

func (e *Error) render(name Namer) error { return fmt.Errorf(e.format, named(e.args, name)...) }

// named is args with every Field worded by name (its own name when name is
// nil or says ""), and every *Error or Message among them worded too.
func named(args []any, name Namer) []any {
	out := make([]any, len(args))
	for i, a := range args {
		switch v := a.(type) {
		case Field:
			s := string(v)
			if name != nil {
				if w := name(v); w != "" {
					s = w
				}
			}
			a = s
		case Message:
			a = v.In(name)
		case error:
			if name != nil && len(all(v)) > 0 {
				a = &worded{text: In(v, name), err: v} // an *Error it wraps is worded too
			}
		}
		out[i] = a
	}
	return out
}

// Message is words that name settings, as an Error's do, for what is not
// an error: a warning a report carries, a limit an error names. Its
// String names the fields; In words it for another reader.
type Message struct {
	format string
	args   []any
}

// Sprintf makes a Message: args that are Fields are the settings named,
// the others are formatted as fmt.Sprintf does.
func Sprintf(format string, args ...any) Message { return Message{format: format, args: args} }

// IsZero says that m holds no words.
func (m Message) IsZero() bool { return m.format == "" }

func (m Message) String() string { return m.In(nil) }

// In words m with name(f) for every Field f it names (the field's own name
// when name is nil or says "").
func (m Message) In(name Namer) string { return fmt.Sprintf(m.format, named(m.args, name)...) }

// Fields lists the settings m names, in order.
func (m Message) Fields() []Field { return fields(m.args) }

// In words err for a reader with name: the text of every *Error it is or
// wraps (through errors.Join too) is worded with name, the rest is left as
// it is.
func In(err error, name Namer) string {
	text := err.Error()
	for _, se := range all(err) {
		text = strings.Replace(text, se.Error(), se.In(name), 1)
	}
	return text
}

// all lists the *Error values in err's tree, outermost first.
func all(err error) []*Error {
	if se, ok := err.(*Error); ok {
		return []*Error{se} // its text holds whatever it wraps
	}
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		if inner := u.Unwrap(); inner != nil {
			return all(inner)
		}
	case interface{ Unwrap() []error }:
		var out []*Error
		for _, e := range u.Unwrap() {
			if e != nil {
				out = append(out, all(e)...)
			}
		}
		return out
	}
	return nil
}

// Bytes words a size as go-humanize's IBytes does ("1.0 MiB", "98 GiB"),
// without making every user of the engine compile go-humanize.
func Bytes(n int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB"}
	v, i := float64(n), 0
	for v >= 1024 && i < len(units)-1 {
		v, i = v/1024, i+1
	}
	if i == 0 || v >= 10 {
		return fmt.Sprintf("%.0f %s", v, units[i])
	}
	return fmt.Sprintf("%.1f %s", v, units[i])
}

// Reword is err worded with name (In), as an error that errors.Is and As
// still see through to err.
func Reword(err error, name Namer) error {
	if err == nil {
		return nil
	}
	return &worded{text: In(err, name), err: err}
}

// worded is err in other words; errors.Is and As still see err.
type worded struct {
	text string
	err  error
}

func (w *worded) Error() string { return w.text }
func (w *worded) Unwrap() error { return w.err }

// WordAs is text (err's, as a reader words it so far) with the first
// error of type T in err worded by word: the engine's typed errors (a
// kind and its fields, such as a missing endpoint) are worded by each
// reader in its own terms. text is returned as it is when err holds no T.
func WordAs[T error](text string, err error, word func(T) string) string {
	var t T
	if !errors.As(err, &t) {
		return text
	}
	return strings.Replace(text, t.Error(), word(t), 1)
}

// Worded is err with text for its words, as an error that errors.Is and
// As still see through to err.
func Worded(err error, text string) error {
	if err == nil {
		return nil
	}
	return &worded{text: text, err: err}
}
