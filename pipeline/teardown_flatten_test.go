package pipeline

import (
	"errors"
	"fmt"
	"testing"
)

// TestFlattenOnlyJoins: errors.Join's parts are listed one by one, nested
// joins too; an error that wraps two others in one sentence (fmt's %w
// twice) stays one.
func TestFlattenOnlyJoins(t *testing.T) {
	a, b, c := errors.New("a"), errors.New("b"), errors.New("c")
	if got := flatten(errors.Join(a, errors.Join(b, c))); len(got) != 3 {
		t.Errorf("a nested join: %v; want 3 errors", got)
	}
	one := fmt.Errorf("stop %w after %w", a, b)
	if got := flatten(one); len(got) != 1 || got[0] != one {
		t.Errorf("one sentence wrapping two: %v; want it whole", got)
	}
}
