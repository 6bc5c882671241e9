// Package setting keeps errors about a run's settings as values until they
// are worded: the engine names the fields a library user sets (Plan.Loop.N,
// Plan.Instances) as Field values among an error's parts, and whoever faces
// a person words them once, in that person's terms (dbsock run: its flags;
// dbsock.Compare: CompareOptions' fields), by formatting the parts again
// with its own names. Rendered text is never reworded.
package setting

import (
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

// Kind is a reader's own words for one of the engine's typed errors (a
// missing endpoint, say): ok is false for an error it does not word.
type Kind func(err error) (words string, ok bool)

// As is the Kind that words every error of type T with word.
func As[T error](word func(T) string) Kind {
	return func(err error) (string, bool) {
		t, ok := err.(T)
		if !ok {
			return "", false
		}
		return word(t), true
	}
}

// Error is a run that cannot be carried out as set, kept as its parts: a
// format and its args, among them the Fields it names, the Messages and
// the errors it holds (those given for %w it wraps). Its Error names the
// fields by their own names; In words it for a reader.
type Error struct {
	format string
	args   []any
}

// Err makes an Error: args that are Fields are the settings named, the
// others are formatted as fmt.Errorf does (%w wraps). An engine's error
// that may hold an Error is wrapped with Err too, so that the reader's
// words reach it.
func Err(format string, args ...any) error {
	return &Error{format: format, args: args}
}

func (e *Error) Error() string { return e.In(nil) }

// In words the error with name(f) for every Field f it names (the field's
// own name when name is nil or says ""), and every error it holds as In
// does.
func (e *Error) In(name Namer, kinds ...Kind) string {
	return words(e.format, e.args, name, kinds)
}

// Unwrap returns the errors e wraps: those its format gives %w.
func (e *Error) Unwrap() []error {
	var out []error
	for i, v := range verbs(e.format) {
		if v.verb != 'w' || i >= len(e.args) {
			continue
		}
		if err, ok := e.args[i].(error); ok && err != nil {
			out = append(out, err)
		}
	}
	return out
}

// Fields lists the settings the error names, in order (those of a Message
// or of an *Error it holds among them).
func (e *Error) Fields() []Field { return fields(e.args) }

func fields(args []any) []Field {
	var fs []Field
	for _, a := range args {
		switch v := a.(type) {
		case Field:
			fs = append(fs, v)
		case Message:
			fs = append(fs, v.Fields()...)
		case *Error:
			fs = append(fs, v.Fields()...)
		}
	}
	return fs
}

// verb is one of a format's verbs: the text before it, and the verb with
// its flags, width and precision ("%-8s"); the last has none, only the
// text after every verb.
type verb struct {
	before, spec string
	verb         byte
}

// verbs reads format as fmt does, a verb per arg ("%%" is text). A verb
// that indexes its args or takes its width from one ("%[2]d", "%*d") is
// not read: none of the engine's formats has one.
func verbs(format string) []verb {
	var out []verb
	var text strings.Builder
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			text.WriteByte(format[i])
			continue
		}
		j := i + 1
		for j < len(format) && strings.IndexByte("+-# 0123456789.", format[j]) >= 0 {
			j++
		}
		if j == len(format) {
			text.WriteString("%!(NOVERB)")
			break
		}
		if format[j] == '%' {
			text.WriteByte('%')
			i = j
			continue
		}
		out = append(out, verb{before: text.String(), spec: format[i : j+1], verb: format[j]})
		text.Reset()
		i = j
	}
	return append(out, verb{before: text.String()})
}

// walk formats args by format's verbs as fmt does, and hands what it
// makes to text, except a Field (given %s or %v), a Message, and an error
// (given %s, %v or %w), which it hands to field, message and nested.
func walk(format string, args []any, text func(string), field func(Field), message func(Message), nested func(error)) {
	vs := verbs(format)
	for i, v := range vs {
		text(v.before)
		if v.verb == 0 {
			break
		}
		if i >= len(args) {
			text("%!" + string(v.verb) + "(MISSING)")
			continue
		}
		plain := v.spec == "%s" || v.spec == "%v" || v.spec == "%w"
		switch a := args[i].(type) {
		case Field:
			if plain {
				field(a)
				continue
			}
		case Message:
			if plain {
				message(a)
				continue
			}
		case error:
			if plain && a != nil {
				nested(a)
				continue
			}
		}
		spec := v.spec
		if v.verb == 'w' {
			spec = spec[:len(spec)-1] + "v"
		}
		text(fmt.Sprintf(spec, args[i]))
	}
	if n := len(vs) - 1; n < len(args) {
		none := "" // no verb: fmt says "%!(EXTRA type=value)"
		text(fmt.Sprintf(none, args[n:]...))
	}
}

// words is format with args worded for a reader: each Field by name (its
// own name when name is nil or says ""), each Message and each error as
// In words them.
func words(format string, args []any, name Namer, kinds []Kind) string {
	var b strings.Builder
	walk(format, args, func(s string) { b.WriteString(s) },
		func(f Field) { b.WriteString(nameOf(f, name)) },
		func(m Message) { b.WriteString(m.In(name)) },
		func(err error) { b.WriteString(In(err, name, kinds...)) })
	return b.String()
}

func nameOf(f Field, name Namer) string {
	if name != nil {
		if w := name(f); w != "" {
			return w
		}
	}
	return string(f)
}

// Message is words that name settings, as an Error's do, for what is not
// an error: a warning a report carries, a limit an error names. Its
// String names the fields; In words it for another reader.
type Message struct {
	format string
	args   []any
}

// Msg makes a Message: args that are Fields are the settings named, the
// others are formatted as fmt.Sprintf does.
func Msg(format string, args ...any) Message { return Message{format: format, args: args} }

// IsZero says that m holds no words.
func (m Message) IsZero() bool { return m.format == "" }

func (m Message) String() string { return m.In(nil) }

// In words m with name(f) for every Field f it names (the field's own name
// when name is nil or says "").
func (m Message) In(name Namer) string { return words(m.format, m.args, name, nil) }

// Fields lists the settings m names, in order.
func (m Message) Fields() []Field { return fields(m.args) }

// In words err for a reader, from its parts: an *Error is formatted again
// with name for its Fields (and the errors it holds worded so too), what
// errors.Join joined is worded a line each, an error that says no more
// than the one it wraps (a mark for errors.Is) as that one, an error one
// of kinds words has those words, and any other error its own text. Text
// already made is never reworded: an *Error under fmt.Errorf's %w keeps
// the words fmt gave it, so whoever wraps an engine's error wraps it with
// Err.
func In(err error, name Namer, kinds ...Kind) string {
	if err == nil {
		return ""
	}
	for _, k := range kinds {
		if words, ok := k(err); ok {
			return words
		}
	}
	switch e := err.(type) {
	case *Error:
		return e.In(name, kinds...)
	case *said:
		return e.in(name)
	case *worded:
		return e.text
	}
	if parts := joined(err); parts != nil {
		lines := make([]string, len(parts))
		for i, p := range parts {
			lines[i] = In(p, name, kinds...)
		}
		return strings.Join(lines, "\n")
	}
	if inner := mark(err); inner != nil {
		return In(inner, name, kinds...)
	}
	return err.Error()
}

// joined is what errors.Join joined into err, or nil: an error whose
// message is its parts' messages, a line each.
func joined(err error) []error {
	j, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return nil
	}
	var parts []error
	var msgs []string
	for _, e := range j.Unwrap() {
		if e != nil {
			parts = append(parts, e)
			msgs = append(msgs, e.Error())
		}
	}
	if len(parts) == 0 || err.Error() != strings.Join(msgs, "\n") {
		return nil
	}
	return parts
}

// mark is the error err wraps when err says no more than it (a mark for
// errors.Is), or nil.
func mark(err error) error {
	u, ok := err.(interface{ Unwrap() error })
	if !ok {
		return nil
	}
	if inner := u.Unwrap(); inner != nil && inner.Error() == err.Error() {
		return inner
	}
	return nil
}

// Part is a piece of an error's words: text, or a setting it names for
// its reader to word. An error crosses to another process as its parts
// (Parts), and is worded there as it would be here (Said).
type Part struct {
	Text  string `json:"text,omitempty"`
	Field Field  `json:"field,omitempty"`
}

// Parts is err's words as In makes them, with each setting it names a
// Part of its own, for another process to word.
func Parts(err error) []Part {
	var out []Part
	text := func(s string) {
		switch n := len(out); {
		case s == "":
		case n > 0 && out[n-1].Field == "":
			out[n-1].Text += s
		default:
			out = append(out, Part{Text: s})
		}
	}
	field := func(f Field) { out = append(out, Part{Field: f}) }
	var add func(error)
	var message func(Message)
	message = func(m Message) { walk(m.format, m.args, text, field, message, add) }
	add = func(err error) {
		switch e := err.(type) {
		case *Error:
			walk(e.format, e.args, text, field, message, add)
			return
		case *said:
			for _, p := range e.parts {
				if p.Field != "" {
					out = append(out, p)
				} else {
					text(p.Text)
				}
			}
			return
		case *worded:
			text(e.text)
			return
		}
		if parts := joined(err); parts != nil {
			for i, p := range parts {
				if i > 0 {
					text("\n")
				}
				add(p)
			}
			return
		}
		if inner := mark(err); inner != nil {
			add(inner)
			return
		}
		text(err.Error())
	}
	if err != nil {
		add(err)
	}
	return out
}

// Said is the error another process made, known by its parts (Parts): In
// words it as that process's would be. It wraps marks, for errors.Is.
func Said(parts []Part, marks ...error) error { return &said{parts: parts, marks: marks} }

type said struct {
	parts []Part
	marks []error
}

func (s *said) Error() string   { return s.in(nil) }
func (s *said) Unwrap() []error { return s.marks }

func (s *said) in(name Namer) string {
	var b strings.Builder
	for _, p := range s.parts {
		if p.Field != "" {
			b.WriteString(nameOf(p.Field, name))
		} else {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// Reword is err worded for a reader (In), as an error that errors.Is and
// As still see through to err.
func Reword(err error, name Namer, kinds ...Kind) error {
	if err == nil {
		return nil
	}
	return &worded{text: In(err, name, kinds...), err: err}
}

// worded is err in a reader's words; errors.Is and As still see err.
type worded struct {
	text string
	err  error
}

func (w *worded) Error() string { return w.text }
func (w *worded) Unwrap() error { return w.err }

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
