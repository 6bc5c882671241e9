package reports

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/dustin/go-humanize"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/results"
)

// distinctRows says how many distinct rows target's runs read per round,
// per transport ("" when its ops read no rows).
func distinctRows(r *results.Report, target string) string {
	var parts []string
	for _, tr := range r.PathsOf(target) {
		lo, hi := int64(-1), int64(0)
		for _, run := range r.Runs {
			if run.Target != target || run.Transport != tr || run.DistinctKeys == 0 {
				continue
			}
			if lo < 0 || run.DistinctKeys < lo {
				lo = run.DistinctKeys
			}
			hi = max(hi, run.DistinctKeys)
		}
		if lo < 0 {
			continue
		}
		n := humanize.Comma(lo)
		if hi != lo {
			n += " to " + humanize.Comma(hi)
		}
		parts = append(parts, tr.Label()+" "+n)
	}
	if len(parts) == 0 {
		return ""
	}
	return strings.Join(parts, ", ") + " distinct"
}

// workloadPhrase says what the ops read, for the method sentence: "" for
// reports that read one row (older dbsock, or --rows 1 said as such).
// fewer are the targets that read fewer rows than the workload seeds
// (fewerRows), said beside the rows.
func workloadPhrase(w *results.Workload, fewer ...string) string {
	if w == nil {
		return ""
	}
	if w.Rows == 1 {
		return "; every lookup reads the same single row"
	}
	keys := w.Keys + " keys"
	switch w.Keys {
	case "zipf":
		keys = fmt.Sprintf("zipfian keys (YCSB's scrambled zipfian, theta %g)", w.Theta)
	case "hotspot":
		keys = fmt.Sprintf("a hotspot (%g%% of the ops on %g%% of the rows)", 100*w.HotOps, 100*w.HotRows)
	case "sequential":
		keys = "keys in order"
	}
	verb := "lookup reads"
	switch w.Op {
	case "update":
		verb = "update writes"
	case "mixed":
		verb = fmt.Sprintf("op (reads and updates, %s, drawn op by op and reported apart) touches", w.Mix)
	}
	rows := fmt.Sprintf("one of %s seeded rows", humanize.Comma(int64(w.Rows)))
	if len(w.KeysFrom) > 0 {
		rows = fmt.Sprintf("one of the rows (at most %s of them) whose keys the user gave (%s)", humanize.Comma(int64(w.Rows)), joinByTarget(w.KeysFrom))
	}
	if len(fewer) > 0 {
		rows += " (" + strings.Join(fewer, "; ") + ")"
	}
	s := fmt.Sprintf("; each %s %s, chosen by %s, the same rows in both blocks of a pair", verb, rows, keys)
	if len(w.Query) > 0 {
		s += "; the op is the user's own query (" + joinByTarget(w.Query) + ")"
	}
	return s
}

// fewerRows names each target that read fewer rows than the workload
// seeds because its server reads many too slowly (results.Target.Rows,
// and a warning in its details that says why): "mongo: the same single
// row, as its details say". A target whose rows are the user's keys
// (--keys-from) is said by the workload phrase itself.
func fewerRows(r *results.Report) []string {
	w := r.Config.Workload
	if w == nil || w.Rows <= 1 {
		return nil
	}
	var out []string
	for _, t := range r.Targets {
		if _, own := w.KeysFrom[t.Name]; own || t.Rows <= 0 || t.Rows >= w.Rows {
			continue
		}
		rows := "one of " + humanize.Comma(int64(t.Rows)) + " rows"
		if t.Rows == 1 {
			rows = "the same single row"
		}
		out = append(out, t.Name+": "+rows+", as its details say")
	}
	return out
}

// joinByTarget lists m as "target: value", sorted by target.
func joinByTarget(m map[string]string) string {
	names := make([]string, 0, len(m))
	for name := range m {
		names = append(names, name)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, name := range names {
		parts[i] = name + ": " + codeSpan(m[name])
	}
	return strings.Join(parts, "; ")
}

// restarted says what a server instance was: a restart of the server, or,
// for a server dbsock did not start (provider external), which it cannot
// restart, a fresh set of connections to the same process.
func restarted(r *results.Report) string {
	external := 0
	for _, t := range r.Targets {
		if t.Provider == "external" {
			external++
		}
	}
	switch {
	case external == 0:
		return "restarted between them"
	case external == len(r.Targets):
		return "fresh connections to the same server process each: dbsock did not start it, so it could not restart it"
	}
	return "the servers dbsock started were restarted between them; the others, which it did not start, got fresh connections only"
}

// methodSentence is the headline's method: a short paragraph and a list
// (what was timed, how many, how paired, the interval, the placement),
// under 600 characters, linking the details.
func methodSentence(r *results.Report) string {
	c := r.Config
	what := "lookup"
	if w := c.Workload; w != nil && (w.Op != "read" || len(w.Query) > 0) {
		what = "op"
	}
	ops := plural(c.N, what) + " per path and round"
	if c.DurationNs > 0 {
		ops = what + "s for " + time.Duration(c.DurationNs).String() + " per path and round"
	}
	place := "client and servers not pinned"
	if pl := placementsPhrase(r); pl != "" {
		place = pl
	} else if c.Placement.Mode != "none" && c.Placement.Mode != "" {
		place = fmt.Sprintf("client CPU %s, servers CPU %s (%s)", c.Placement.ClientCPUs, orNotPinned(c.Placement.ServerCPUs), c.Placement.Mode)
		if ext := externalCPUs(r); ext != "" {
			place = fmt.Sprintf("client on CPU %s (%s), %s", c.Placement.ClientCPUs, c.Placement.Mode, ext)
		}
	}
	e := r.Environment
	base := baseOf(r).Label()
	paths := measuredPaths(r)
	other := "Unix"
	if !slices.Contains(paths, results.Socket()) {
		other = "the path's" // a hop's routes only: no Unix path to name
	}
	many := plural(c.Rounds, "round") + " of " + plural(c.Blocks, "block pair")
	stats := "median of the paired ratios " + base + "/" + other + ", distribution-free 95% interval"
	if c.Instances > 1 {
		many = fmt.Sprintf("%d server instances (%s) × %s", c.Instances, restarted(r), many)
		stats = "each instance's median paired ratio " + base + "/" + other + "; their median, distribution-free 95% interval"
	}
	routes, paired := "127.0.0.1 TCP and the Unix socket", "TCP and Unix blocks interleaved in pairs, the same rows in both"
	workload := strings.TrimPrefix(workloadPhrase(c.Workload, fewerRows(r)...), "; ")
	workload = strings.Replace(strings.Replace(workload, ", the same rows in both blocks of a pair", "", 1), "each lookup reads ", "each reads ", 1)
	if len(paths) > 2 || other != "Unix" {
		var labels []string
		for _, p := range paths {
			labels = append(labels, p.Label())
		}
		routes, paired = strings.Join(labels[:len(labels)-1], ", ")+" and "+labels[len(labels)-1], "one block per path in groups, in random order, the same rows in each"
		many = strings.Replace(many, "block pair", "block group", 1)
	}
	if workload != "" {
		workload = "; " + workload
	}
	return fmt.Sprintf("**Method** ([details](#details)): timed %ss from %s%s over %s.\n\n"+
		"- **timed:** %s%s\n- **how many:** %s\n- **paired:** %s\n- **interval:** %s\n- **placement:** %s; %s, %d CPUs; %s; dbsock %s",
		what, shortClients(r), clientPlace(c.Client), routes, ops, workload, many, paired, stats, place, orUnknown(e.CPUModel), e.NumCPU, providerPhrase(r), r.Tool.Version)
}

// measuredPaths are the paths the run asked for (Config.Paths) that some
// case measured: a server that does not serve one (a hop whose leg to the
// server is never its socket) leaves it out, and the method names only
// what was timed. A report without cases keeps what was asked.
func measuredPaths(r *results.Report) []drivers.Transport {
	asked := r.Config.Paths
	if len(asked) == 0 {
		asked = []drivers.Transport{results.DefaultBaseline(), results.Socket()}
	}
	var out []drivers.Transport
	for _, p := range asked {
		if slices.ContainsFunc(r.Summary, func(s results.Summary) bool { _, ok := s.SideOf(p); return ok }) {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		return asked
	}
	return out
}

// shortClients names the client stacks in a few words: "one Go client",
// "Go, C, Python, Node.js and PHP clients in turn".
func shortClients(r *results.Report) string {
	if len(r.Config.Clients) == 0 {
		return "one Go client"
	}
	var names []string
	for _, c := range r.Config.Clients {
		names = append(names, shortStack(c))
	}
	if len(names) == 1 {
		return "a " + names[0] + " client"
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1] + " clients in turn"
}

// providerPhrase names the provider that supplied the servers ("local
// provider", "docker provider (chosen by auto)"), or each target's where
// they differ ("servers from the local provider (mysql, redis) and the
// docker provider (postgres), chosen by auto"): container and local
// numbers differ.
func providerPhrase(r *results.Report) string {
	var order []string
	by := map[string][]string{}
	for _, t := range r.Targets {
		if t.Provider == "" {
			continue
		}
		if by[t.Provider] == nil {
			order = append(order, t.Provider)
		}
		by[t.Provider] = append(by[t.Provider], t.Name)
	}
	chosen := ""
	if c := r.Config.Provider; c != "" && (len(order) != 1 || order[0] != c) {
		chosen = ", chosen by " + c
	}
	switch len(order) {
	case 0:
		return r.Config.Provider + " provider"
	case 1:
		if chosen != "" {
			chosen = " (" + strings.TrimPrefix(chosen, ", ") + ")"
		}
		return order[0] + " provider" + chosen
	}
	var parts []string
	for _, p := range order {
		parts = append(parts, fmt.Sprintf("the %s provider (%s)", p, strings.Join(by[p], ", ")))
	}
	return "servers from " + strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1] + chosen
}

// pathList names the paths of a run in words: "127.0.0.1 TCP, TCP6
// ([::1]) and the server's Unix socket".
func pathList(paths []drivers.Transport) string {
	var names []string
	for _, p := range paths {
		names = append(names, p.Info().Phrase)
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// clientPlace says where the client ran when it was not in the dbsock
// process itself.
func clientPlace(client string) string {
	if client == "container" {
		return " in a container of its own (sharing the host network and the servers' socket directories)"
	}
	return ""
}

// externalCPUs says where the servers dbsock did not start ran, when every
// target's server is one ("" otherwise): their own affinity, which dbsock
// read and did not set.
func externalCPUs(r *results.Report) string {
	var parts []string
	for _, t := range r.Targets {
		if t.Provider != "external" {
			return ""
		}
		cpus, _, _ := strings.Cut(t.ServerCPUs, " (")
		if cpus == "" { // no process of it found to read
			parts = append(parts, t.Name+" on CPUs dbsock did not read")
			continue
		}
		parts = append(parts, t.Name+" on CPUs "+cpus)
	}
	if len(parts) == 0 {
		return ""
	}
	return "servers not started by dbsock, so not pinned by it (" + strings.Join(parts, ", ") + ")"
}
