package setting

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"testing"
)

func TestErrorNamesFieldsOrWords(t *testing.T) {
	err := Errorf("%s %d is more than %s %d: lower %s", Blocks, 20, N, 10, Blocks)
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
	inner := Errorf("%s %s is out of range: %w", OpTimeout, "5ns", io.EOF)
	outer := fmt.Errorf("mysql: %w", inner)
	got := In(outer, func(f Field) string { return "--op-timeout" })
	if want := "mysql: --op-timeout 5ns is out of range: EOF"; got != want {
		t.Errorf("In = %q, want %q", got, want)
	}
	if !errors.Is(outer, io.EOF) {
		t.Error("the wrapped error is lost")
	}
	if got := In(io.EOF, nil); got != "EOF" {
		t.Errorf("In(plain) = %q", got)
	}
}

func TestEveryJoinedErrorIsWorded(t *testing.T) {
	a := fmt.Errorf("mysql: %w", Errorf("no answer within 10s (%s)", OpTimeout))
	b := fmt.Errorf("redis: %w", Errorf("no answer within 10s (%s)", OpTimeout))
	got := In(errors.Join(a, b), func(Field) string { return "--op-timeout" })
	if want := "mysql: no answer within 10s (--op-timeout)\nredis: no answer within 10s (--op-timeout)"; got != want {
		t.Errorf("In = %q, want %q", got, want)
	}
}

func TestNestedErrorsAreWorded(t *testing.T) {
	inner := Errorf("a write needs %s update", Op)
	outer := Errorf("%s for mysql: %w", Queries, inner)
	got := In(fmt.Errorf("run: %w", outer), func(f Field) string { return map[Field]string{Op: "--op", Queries: "--query"}[f] })
	if want := "run: --query for mysql: a write needs --op update"; got != want {
		t.Errorf("In = %q, want %q", got, want)
	}
	if !errors.Is(outer, inner) {
		t.Error("the inner error is lost")
	}
}

type missing struct{ what string }

func (m *missing) Error() string { return "no " + m.what + " (Engine.Field)" }

func TestTypedErrorIsWordedByItsReader(t *testing.T) {
	inner := &missing{what: "socket"}
	err := fmt.Errorf("redis: %w", Errorf("%s: %w; fix it", Paths, inner))
	text := WordAs(In(err, func(Field) string { return "--paths" }), err, func(m *missing) string { return "no " + m.what + ": add --redis-socket" })
	if want := "redis: --paths: no socket: add --redis-socket; fix it"; text != want {
		t.Errorf("WordAs = %q, want %q", text, want)
	}
	if got := WordAs(io.EOF.Error(), io.EOF, func(*missing) string { return "x" }); got != "EOF" {
		t.Errorf("WordAs without one = %q", got)
	}
	w := Worded(err, text)
	var m *missing
	if w.Error() != text || !errors.As(w, &m) || m != inner {
		t.Errorf("Worded = %q, As %v", w, m)
	}
	if Worded(nil, "x") != nil {
		t.Error("Worded(nil) is not nil")
	}
}

func TestMessageIsWordedLikeAnError(t *testing.T) {
	limit := Sprintf("%s plus 1 ms per row", OpTimeout)
	m := Sprintf("no answer within %s (%s); raise %s", "12s", limit, Rows)
	if got, want := m.String(), "no answer within 12s (Plan.Loop.OpTimeout plus 1 ms per row); raise Plan.Workload.Rows"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	flags := func(f Field) string { return map[Field]string{OpTimeout: "--op-timeout", Rows: "--rows"}[f] }
	if got, want := m.In(flags), "no answer within 12s (--op-timeout plus 1 ms per row); raise --rows"; got != want {
		t.Errorf("In(flags) = %q, want %q", got, want)
	}
	if got := Errorf("seeding took too long (%s)", limit).(*Error).In(flags); got != "seeding took too long (--op-timeout plus 1 ms per row)" {
		t.Errorf("an Error naming a Message: %q", got)
	}
	if !Sprintf("").IsZero() || m.IsZero() || !slices.Equal(m.Fields(), []Field{OpTimeout, Rows}) {
		t.Errorf("IsZero or Fields: %v", m.Fields())
	}
}
