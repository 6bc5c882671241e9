package agents_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dbsock/dbsock/agents"
)

// leakForms are the forms of password that must never be in an error:
// raw, as Go's JSON has it (HTML-escaped), as JSON without that, as Go
// quotes it, and each of those quoted again.
func leakForms(t *testing.T, password string) []string {
	t.Helper()
	forms := []string{password}
	j, err := json.Marshal(password)
	if err != nil {
		t.Fatal(err)
	}
	forms = append(forms, string(j[1:len(j)-1]))
	forms = append(forms, strings.Trim(strconv.Quote(password), `"`))
	for _, f := range forms[:3] {
		forms = append(forms, strings.Trim(strconv.Quote(f), `"`))
		jj, _ := json.Marshal(f)
		forms = append(forms, string(jj[1:len(jj)-1]))
	}
	return forms
}

// TestAgentNeverQuotesAnyFormOfThePassword: a password with the
// characters JSON and Go escape ('<', '&', '"', '\') is in no form in the
// error of an agent that echoes its open (password and all) to stdout and
// stderr, nor of one that answers it as its error's message; the line
// that carried it is described, never quoted.
func TestAgentNeverQuotesAnyFormOfThePassword(t *testing.T) {
	const password = `Pa<ss&wo"rd\x`
	errAgent := filepath.Join(t.TempDir(), "errors.py")
	if err := os.WriteFile(errAgent, []byte(`import json, sys
print(json.dumps({"type": "hello", "protocol": 1, "language": "py", "runtime_version": "0", "library": "test", "library_version": "0"}), flush=True)
for line in sys.stdin:
    print("cannot do " + line.strip() + " " + json.dumps(line), file=sys.stderr, flush=True)
    print(json.dumps({"type": "error", "message": "cannot do " + line.strip()}), flush=True)
sys.exit(3)
`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		argv []string
		want string
	}{
		{"echo", []string{"testdata/fake.sh", "echo"}, "does not quote: it carried a password"},
		{"error", []string{"/usr/bin/python3", errAgent}, "the cmd agent could not do open c1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := agents.Start(context.Background(), agents.Spec{Stack: "cmd", Argv: tc.argv}, limits)
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			_, err = a.Open(context.Background(), agents.Open{ID: "c1", Path: "tcp", Address: "127.0.0.1:1", Password: password})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("an agent that says its open back: %v, want an error saying %q", err, tc.want)
			}
			errs := []error{err}
			if tc.name == "error" {
				// Its stderr is quoted when it exits with an error.
				if err := a.Close(); err == nil || !strings.Contains(err.Error(), "its stderr") {
					t.Fatalf("an agent that exits 3 at its close: %v, want an error quoting its stderr", err)
				} else {
					errs = append(errs, err)
				}
			}
			for _, err := range errs {
				for _, f := range append(leakForms(t, password), "Pa\\u003css", "Pa<ss", "\\u0026wo") {
					if strings.Contains(err.Error(), f) {
						t.Errorf("the error holds the password, or part of it, as %s: %v", f, err)
					}
				}
			}
		})
	}
}

// TestAgentOpErrorNeverQuotesThePassword: an op's error message that
// carries the password, escaped in a way of the agent's own, is not
// quoted.
func TestAgentOpErrorNeverQuotesThePassword(t *testing.T) {
	const password = `Pa<ss&wo"rd`
	agent := filepath.Join(t.TempDir(), "ops.py")
	if err := os.WriteFile(agent, []byte(`import json, sys
print(json.dumps({"type": "hello", "protocol": 1, "language": "py", "runtime_version": "0", "library": "test", "library_version": "0"}), flush=True)
for line in sys.stdin:
    m = json.loads(line)
    if m["type"] == "open":
        pw = m["password"]
        print(json.dumps({"type": "opened", "id": m["id"]}), flush=True)
    elif m["type"] == "block":
        mangled = pw.replace("<", "\\x3c").replace('"', '\\\\"')
        n = len(m["keys"])
        print(json.dumps({"type": "block_result", "id": m["id"], "ns": [5000] * n,
                          "errors": [{"index": 0, "message": "AUTH failed for " + mangled}]}), flush=True)
`), 0o600); err != nil {
		t.Fatal(err)
	}
	a, err := agents.Start(context.Background(), agents.Spec{Stack: "cmd", Argv: []string{"/usr/bin/python3", agent}}, limits)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if _, err := a.Open(context.Background(), agents.Open{ID: "c1", Path: "tcp", Address: "127.0.0.1:1", Password: password}); err != nil {
		t.Fatal(err)
	}
	r, err := a.Block(context.Background(), block(3))
	if err != nil || len(r.Errors) != 1 {
		t.Fatalf("block: %+v, %v", r, err)
	}
	if msg := r.Errors[0].Message; strings.Contains(msg, "ss&wo") || strings.Contains(msg, "AUTH failed") {
		t.Errorf("the op's error is quoted with the password in it: %q", msg)
	}
}
