package main

import (
	"fmt"
	"strings"
	"testing"
)

// TestErrorLines: errors.Join's parts print a line each, any other
// error's lines fold into one.
func TestErrorLines(t *testing.T) {
	got := errorLines(&exitError{code: ExitRegression, err: lines([]string{"a\x1b[2J", "b\nc"})})
	if want := []string{`a\x1b[2J`, "b; c"}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("errorLines = %q, want %q", got, want)
	}
	if got := errorLines(fmt.Errorf("run failed: %w", fmt.Errorf("x\ndbsock: y\tz\x7f"))); len(got) != 1 || got[0] != `run failed: x; dbsock: y z\x7f` {
		t.Errorf("errorLines = %q", got)
	}
}
