package setting

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
)

func TestErrorNamesFieldsOrWords(t *testing.T) {
	err := Err("%s %d is more than %s %d: lower %s", Blocks, 20, N, 10, Blocks)
	if got, want := err.Error(), "Plan.Loop.Blocks 20 is more than Plan.Loop.N 10: lower Plan.Loop.Blocks"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	flags := func(f Field) string {
		return map[Field]string{Blocks: "--blocks", N: "--n"}[f]
	}
	var se *Error
	if !errors.As(err, &se) {
		t.Fatal("not an *Error")
	}
	if got, want := se.In(flags), "--blocks 20 is more than --n 10: lower --blocks"; got != want {
		t.Errorf("In(flags) = %q, want %q", got, want)
	}
	if got := se.Fields(); !slices.Equal(got, []Field{Blocks, N, Blocks}) {
		t.Errorf("Fields() = %v", got)
	}
	// A namer that has no word for a field leaves the field's own name.
	if got := se.In(func(Field) string { return "" }); got != err.Error() {
		t.Errorf("In(empty namer) = %q", got)
	}
}

func TestWrappedErrorIsWordedInPlace(t *testing.T) {
	inner := Err("%s %s is out of range: %w", OpTimeout, "5ns", io.EOF)
	outer := Err("mysql: %w", inner)
	if got, want := outer.Error(), "mysql: Plan.Loop.OpTimeout 5ns is out of range: EOF"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	got := In(outer, func(f Field) string { return "--op-timeout" })
	if want := "mysql: --op-timeout 5ns is out of range: EOF"; got != want {
		t.Errorf("In = %q, want %q", got, want)
	}
	if !errors.Is(outer, io.EOF) || !errors.Is(outer, inner) {
		t.Error("the wrapped error is lost")
	}
	if got := In(io.EOF, nil); got != "EOF" {
		t.Errorf("In(plain) = %q", got)
	}
	// fmt.Errorf's text is made once: it is not reworded.
	if got := In(fmt.Errorf("mysql: %w", inner), func(Field) string { return "--op-timeout" }); got != "mysql: "+inner.Error() {
		t.Errorf("In(fmt.Errorf) = %q", got)
	}
}

func TestUnwrapIsWhatTheFormatWraps(t *testing.T) {
	shown, wrapped := errors.New("shown"), errors.New("wrapped")
	err := Err("%5.1f%% %v, then %+q: %w", 1.5, shown, "x", wrapped)
	if got := err.(*Error).Unwrap(); !slices.Equal(got, []error{wrapped}) {
		t.Errorf("Unwrap() = %v, want only the error given %%w", got)
	}
	if errors.Is(err, shown) || !errors.Is(err, wrapped) {
		t.Errorf("errors.Is sees the error given %%v, or not the one given %%w")
	}
	if got, want := err.Error(), fmt.Errorf("%5.1f%% %v, then %+q: %w", 1.5, shown, "x", wrapped).Error(); got != want {
		t.Errorf("Error() = %q, want fmt.Errorf's %q", got, want)
	}
}

func TestEveryJoinedErrorIsWorded(t *testing.T) {
	a := Err("mysql: %w", Err("no answer within 10s (%s)", OpTimeout))
	b := Err("redis: %w", Err("no answer within 10s (%s)", OpTimeout))
	flag := func(Field) string { return "--op-timeout" }
	const both = "mysql: no answer within 10s (--op-timeout)\nredis: no answer within 10s (--op-timeout)"
	if got := In(errors.Join(a, b), flag); got != both {
		t.Errorf("In = %q, want %q", got, both)
	}
	if got := In(Err("run: %w", errors.Join(a, b)), flag); got != "run: "+both {
		t.Errorf("In(Err of a join) = %q", got)
	}
}

func TestNestedErrorsAreWorded(t *testing.T) {
	inner := Err("a write needs %s update", Op)
	outer := Err("%s for mysql: %w", Queries, inner)
	got := In(Err("run: %w", outer), func(f Field) string { return map[Field]string{Op: "--op", Queries: "--query"}[f] })
	if want := "run: --query for mysql: a write needs --op update"; got != want {
		t.Errorf("In = %q, want %q", got, want)
	}
	if !errors.Is(outer, inner) {
		t.Error("the inner error is lost")
	}
	if got := outer.(*Error).Fields(); !slices.Equal(got, []Field{Queries, Op}) {
		t.Errorf("Fields() = %v", got)
	}
}

type missing struct{ what string }

func (m *missing) Error() string { return "no " + m.what + " (Engine.Field)" }

func TestTypedErrorIsWordedByItsReader(t *testing.T) {
	inner := &missing{what: "socket"}
	err := Err("redis: %w", Err("%s: %w; fix it", Paths, inner))
	kind := As(func(m *missing) string { return "no " + m.what + ": add --redis-socket" })
	text := In(err, func(Field) string { return "--paths" }, kind)
	if want := "redis: --paths: no socket: add --redis-socket; fix it"; text != want {
		t.Errorf("In = %q, want %q", text, want)
	}
	if got := In(io.EOF, nil, kind); got != "EOF" {
		t.Errorf("In without one = %q", got)
	}
	w := Reword(err, func(Field) string { return "--paths" }, kind)
	var m *missing
	if w.Error() != text || !errors.As(w, &m) || m != inner {
		t.Errorf("Reword = %q, As %v", w, m)
	}
	if Reword(nil, nil) != nil {
		t.Error("Reword(nil) is not nil")
	}
}

func TestMessageIsWordedLikeAnError(t *testing.T) {
	limit := Msg("%s plus 1 ms per row", OpTimeout)
	m := Msg("no answer within %s (%s); raise %s", "12s", limit, Rows)
	if got, want := m.String(), "no answer within 12s (Plan.Loop.OpTimeout plus 1 ms per row); raise Plan.Workload.Rows"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	flags := func(f Field) string { return map[Field]string{OpTimeout: "--op-timeout", Rows: "--rows"}[f] }
	if got, want := m.In(flags), "no answer within 12s (--op-timeout plus 1 ms per row); raise --rows"; got != want {
		t.Errorf("In(flags) = %q, want %q", got, want)
	}
	if got := Err("seeding took too long (%s)", limit).(*Error).In(flags); got != "seeding took too long (--op-timeout plus 1 ms per row)" {
		t.Errorf("an Error naming a Message: %q", got)
	}
	if !Msg("").IsZero() || m.IsZero() || !slices.Equal(m.Fields(), []Field{OpTimeout, Rows}) {
		t.Errorf("IsZero or Fields: %v", m.Fields())
	}
}

func TestFormatsAsFmtDoes(t *testing.T) {
	for _, tt := range []struct {
		format string
		args   []any
	}{
		{"%5.1f%% of %d, %q and %x", []any{99.5, 3, "x", 255}},
		{"%v and %+v: %w", []any{io.EOF, io.EOF, io.EOF}},
		{"%s %d", []any{"only one"}},
		{"%s", []any{"one", 2}},
		{"100%", nil},
		{"%d is %s", []any{Field("A.B"), Field("A.B")}},
	} {
		if got, want := Err(tt.format, tt.args...).Error(), fmt.Errorf(tt.format, tt.args...).Error(); got != want {
			t.Errorf("Err(%q).Error() = %q, want fmt's %q", tt.format, got, want)
		}
		if strings.Contains(tt.format, "%w") {
			continue
		}
		if got, want := Msg(tt.format, tt.args...).String(), fmt.Sprintf(tt.format, tt.args...); got != want {
			t.Errorf("Msg(%q).String() = %q, want fmt's %q", tt.format, got, want)
		}
	}
}

func TestPartsCrossAProcess(t *testing.T) {
	limit := Msg("%s plus 1 ms per row", OpTimeout)
	err := Err("redis: %w", errors.Join(Err("no answer within %s (%s)", "10s", limit), io.EOF))
	parts := Parts(err)
	b, jerr := json.Marshal(parts)
	if jerr != nil {
		t.Fatal(jerr)
	}
	var back []Part
	if jerr := json.Unmarshal(b, &back); jerr != nil {
		t.Fatal(jerr)
	}
	said := Said(back, io.ErrUnexpectedEOF)
	flags := func(Field) string { return "--op-timeout" }
	if got, want := In(said, flags), In(err, flags); got != want || want != "redis: no answer within 10s (--op-timeout plus 1 ms per row)\nEOF" {
		t.Errorf("said = %q, want %q", got, want)
	}
	if said.Error() != err.Error() || !errors.Is(said, io.ErrUnexpectedEOF) {
		t.Errorf("said's Error() = %q, want %q; or its mark is lost", said, err)
	}
	if got := In(Err("client: %w", said), flags); got != "client: "+In(err, flags) {
		t.Errorf("a said error wrapped here = %q", got)
	}
}
