package pipeline

import (
	"errors"
	"fmt"
	"strings"

	"github.com/dbsock/dbsock/agents"
	"github.com/dbsock/dbsock/results"
	"github.com/dbsock/dbsock/targets"
)

// teardown is err, what stopping t's agents returned, without the agents'
// *agents.Teardown errors: an agent that ended badly after its work was
// done (killed when it did not exit, or exiting with an error) leaves its
// results standing, and each such error is a warning of ti, said on the
// log.
func (p Plan) teardown(t *targets.Target, ti *results.Target, err error) error {
	var rest []error
	for _, e := range flatten(err) {
		var td *agents.Teardown
		if !errors.As(e, &td) {
			rest = append(rest, e)
			continue
		}
		ti.Warnings = append(ti.Warnings, results.Says(td.Error()+"."))
		fmt.Fprintf(p.log(), "dbsock: %s: warning: %s\n", t.Name, td)
	}
	return errors.Join(rest...)
}

// flatten lists the errors joined in err (errors.Join's, at any depth).
func flatten(err error) []error {
	if err == nil {
		return nil
	}
	j, ok := err.(interface{ Unwrap() []error })
	if !ok || !isJoin(err, j.Unwrap()) {
		return []error{err} // one error that wraps several (fmt's %w twice, a setting error) is one
	}
	var out []error
	for _, e := range j.Unwrap() {
		out = append(out, flatten(e)...)
	}
	return out
}

// isJoin says whether err is errors.Join of parts: its text is theirs,
// one per line.
func isJoin(err error, parts []error) bool {
	var msgs []string
	for _, e := range parts {
		if e != nil {
			msgs = append(msgs, e.Error())
		}
	}
	return len(msgs) > 0 && err.Error() == strings.Join(msgs, "\n")
}
