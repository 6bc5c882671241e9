package main

import (
	"strings"

	"github.com/dbsock/dbsock/internal/visible"
)

// errorLines is err as the lines dbsock prints on stderr: one per error
// that errors.Join joined (a run's outputs, compare's regressions), each in
// the command's words (inWords) and made visible: an agent's, a server's
// or a file's text reaches the terminal as one line of text, never as its
// escape sequences or as a line of its own that would read as dbsock's.
func errorLines(err error) []string {
	if xe, ok := err.(*exitError); ok {
		err = xe.err
	}
	if parts := joined(err); parts != nil {
		var lines []string
		for _, e := range parts {
			lines = append(lines, errorLines(e)...)
		}
		return lines
	}
	return []string{visible.Line(inWords(err))}
}

// joined is what errors.Join joined into err, or nil: an error whose
// message is its parts' messages, a line each.
func joined(err error) []error {
	j, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return nil
	}
	parts := j.Unwrap()
	var msgs []string
	for _, e := range parts {
		if e != nil {
			msgs = append(msgs, e.Error())
		}
	}
	if len(msgs) == 0 || err.Error() != strings.Join(msgs, "\n") {
		return nil
	}
	return parts
}
