package agents_test

import (
	"strings"
	"testing"

	"github.com/dbsock/dbsock/agents"
)

// TestSplitStack: --clients STACK[:LIBRARY][:MODEL] is read against the
// stacks' own stack.json: a word that is one of the stack's worker models
// (with or without its hyphen) is the model, any other its library; a
// model the stack does not declare is refused naming those it has, and a
// model limited to some libraries says why not the others.
func TestSplitStack(t *testing.T) {
	for c, want := range map[string][3]string{
		"c":                 {"c", "", ""},
		"c:eventloop":       {"c", "", "event-loop"},
		"c:event-loop":      {"c", "", "event-loop"},
		"c:threads":         {"c", "", "threads"},
		"c:libpq:eventloop": {"c", "libpq", "event-loop"},
		"python:psycopg":    {"python", "psycopg", ""},
		"python:processes":  {"python", "", "processes"},
		"c:nosuch":          {"c", "nosuch", ""},
	} {
		s, l, m := agents.SplitStack(".", c)
		if got := [3]string{s, l, m}; got != want {
			t.Errorf("SplitStack(%q) = %q; want %q", c, got, want)
		}
	}
	_, err := agents.Model(".", "c", "fibers")
	if err == nil || !strings.Contains(err.Error(), `the c stack has no worker model "fibers": it has threads (c:threads), event-loop (c:eventloop)`) {
		t.Errorf("an undeclared model: %v", err)
	}
	if m, err := agents.Model(".", "c", ""); m != "threads" || err != nil {
		t.Errorf("the default model: %q, %v", m, err)
	}
	if agents.ModelMissing(".", "c", "event-loop", "libmariadb") == "" || agents.ModelMissing(".", "c", "event-loop", "hiredis") != "" ||
		agents.ModelMissing(".", "c", "threads", "libmariadb") != "" {
		t.Error("the event loop's libraries are not read from agents/c/stack.json")
	}
	if agents.ModelNoConnect(".", "c", "event-loop") == "" || agents.ModelNoConnect(".", "c", "threads") != "" {
		t.Error("the event loop's connect scenario is not read from agents/c/stack.json")
	}
}
