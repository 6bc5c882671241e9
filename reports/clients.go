package reports

import (
	"strings"

	"github.com/dbsock/dbsock/results"
)

// rowName names summary s's row in the headline: its target, the client
// stack when the run measured several ("redis from Python 3.11.2
// (redis-py 4.3.4)"), and the case where the run has more than one per
// target and stack (sweep) or it is not the plain lookup.
func rowName(r *results.Report, s results.Summary, sweep bool) string {
	c := s.Case
	name := c.Target
	if len(r.Config.Clients) > 0 {
		name += " from " + stackName(s)
		c.Stack = ""
		sweep = casesPerStack(r) > 1
	}
	if sweep || !isPlain(c) || len(r.Config.ValueSizes) > 0 {
		name += ": " + c.Label()
	}
	return name
}

// casesPerStack is the most cases the run has of one target and client
// stack.
func casesPerStack(r *results.Report) int {
	n := map[[2]string]int{}
	most := 0
	for _, s := range r.Summary {
		k := [2]string{s.Target, s.Stack}
		n[k]++
		most = max(most, n[k])
	}
	return most
}

// languages are the client stacks' languages as a reader names them.
var languages = map[string]string{"go": "Go", "c": "C", "python": "Python", "node": "Node.js", "php": "PHP"}

// stackName names the client stack that did s's ops: its language and
// runtime, and its library with its version, as its agent said them
// (already escaped in a safe copy).
func stackName(s results.Summary) string {
	c := s.Client
	if c == nil {
		if s.Stack == "" {
			return "Go"
		}
		return s.Stack
	}
	lang, ok := languages[c.Language]
	if !ok {
		lang = c.Language
	}
	name := lang
	if v := strings.TrimPrefix(c.RuntimeVersion, "go"); v != "" {
		name += " " + v
	}
	if c.Library != "" {
		name += " (" + strings.TrimSpace(c.Library+" "+c.LibraryVersion) + ")"
	}
	return name
}

// clientsPhrase says who did the ops: "one Go client", or the stacks of a
// run with several (run --clients).
func clientsPhrase(r *results.Report) string {
	if len(r.Config.Clients) == 0 {
		return "one Go client"
	}
	var names []string
	for _, c := range r.Config.Clients {
		lang, lib, _ := strings.Cut(c, ":")
		name, ok := languages[lang]
		if !ok {
			name = lang
		}
		if lib != "" {
			name += " (" + lib + ")"
		}
		names = append(names, name)
	}
	return "each of " + strings.Join(names, ", ") + " in turn (Go: dbsock's own drivers; the others: an agent process with that language's client library, " +
		"started pinned where dbsock's client runs, timing each op on its language's monotonic clock, each connection verified on the server side)"
}
