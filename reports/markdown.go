package reports

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/dustin/go-humanize"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/reports/words"
	"github.com/dbsock/dbsock/results"
)

// Markdown writes r as a Markdown document that reads well pasted into a
// blog post: the headline (one table across targets, a sentence of method,
// the chart), then the details: method, one section per target,
// thresholds, environment.
func Markdown(w io.Writer, r *results.Report) error {
	return writeMarkdown(w, words.Fill(safeCopy(r)))
}

// writeMarkdown is Markdown of r, a safe copy (safeCopy) with its words.
func writeMarkdown(w io.Writer, r *results.Report) error {
	b := &strings.Builder{}
	writeHeadline(b, r)
	b.WriteString("## Details\n\n")
	writeMethod(b, r)
	writeStacksMethod(b, r)
	for _, t := range r.Targets {
		writeTarget(b, r, t)
	}
	writeDecomposition(b, r)
	writeThresholds(b, r)
	writeEnvironment(b, r)
	_, err := io.WriteString(w, b.String())
	return err
}

// MarkdownSummary writes only the headline part of Markdown (--detail
// summary).
func MarkdownSummary(w io.Writer, r *results.Report) error {
	r = words.Fill(safeCopy(r))
	b := &strings.Builder{}
	writeHeadline(b, r)
	writeThresholds(b, r)
	_, err := io.WriteString(w, strings.ReplaceAll(b.String(), " ([details](#details))", "")) // the summary has no details to link to
	return err
}

// writeHeadline is the table a reader wants first: one row per target (per
// case in a sweep) with the server, both p50s, the speedup with its
// interval and the verdict; then one sentence of method, and the chart.
func writeHeadline(b *strings.Builder, r *results.Report) {
	base := baseOf(r)
	fmt.Fprintf(b, "# Unix domain socket vs %s\n\n", baseTitle(base))
	if atLoad(r) {
		writeLoadHeadline(b, r)
		writePaths(b, r)
		writeHops(b, r)
		b.WriteString(methodSentence(r) + "\n\n")
		writePlotLink(b, r)
		return
	}
	sweep := len(r.Summary) > len(r.Targets)
	cpu := false
	for _, s := range r.Summary {
		c := s.Against(results.Socket())
		cpu = cpu || (c.CPUSaving != nil && c.CPUSaving.ServerNsPerOp != nil)
	}
	first := "target"
	if len(r.Config.Clients) > 0 {
		first = "target and client"
	}
	if cpu {
		fmt.Fprintf(b, "| %s | server | %s p50 | Unix p50 | p50 speedup (95%% CI) | verdict | server CPU saved per op |\n|---|---|--:|--:|--:|---|--:|\n", first, base.Label())
	} else {
		fmt.Fprintf(b, "| %s | server | %s p50 | Unix p50 | p50 speedup (95%% CI) | verdict |\n|---|---|--:|--:|--:|---|\n", first, base.Label())
	}
	var warned []warnedRow
	for i, s := range r.Summary {
		if i > 0 && r.Summary[i-1].Target != s.Target {
			writeSkipped(b, r, r.Summary[i-1].Target, cpu) // a target's skipped stacks below its rows
		}
		name := rowName(r, s, sweep)
		server, targetWarned := "–", false
		for _, t := range r.Targets {
			if t.Name == s.Target && t.Server.Product != "" {
				server = serverColumn(t)
			}
			if t.Name == s.Target && len(t.Warnings) > 0 {
				targetWarned = true
			}
		}
		mark := ""
		if ws := rowWarnings(r, s); len(ws) > 0 && (len(s.Warnings) > 0 || targetWarned) {
			mark, warned = " †", append(warned, warnedRow{name: name, words: ws})
		} else if targetWarned {
			mark = " †" // its target's warnings are said once, under the target's name
		}
		tcp, unix, speed, verdict, saved := headlineFigures(r, &s, base, cpu)
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s%s |%s\n", cell(name), cell(server), tcp, unix, speed, verdict, mark, saved)
	}
	if n := len(r.Summary); n > 0 {
		writeSkipped(b, r, r.Summary[n-1].Target, cpu)
	}
	writeUnmeasured(b, r, cpu)
	b.WriteString("\n")
	writeWarnings(b, append(warned, targetWarnings(r)...))
	b.WriteString(apartNote(r))
	writeStacks(b, r)
	writePaths(b, r)
	writeHops(b, r)
	b.WriteString(methodSentence(r) + "\n\n")
	writePlotLink(b, r)
}

// headlineFigures are a headline row's figures: each path's p50, the
// speedup with its interval, the verdict in a few words and, with cpu, the
// server CPU the socket saved per op; dashes where a side has no result,
// and no figure at all for a case that failed.
func headlineFigures(r *results.Report, s *results.Summary, base drivers.Transport, cpu bool) (tcp, unix, speed, verdict, saved string) {
	bs, us, uc := s.Side(base), s.Side(results.Socket()), s.Against(results.Socket())
	u := pickUnit(bs.Latency.P50, us.Latency.P50)
	speed = fmt.Sprintf("%.2f×", uc.SpeedupP50)
	if ci := uc.SpeedupP50CI; ci != nil {
		speed = fmt.Sprintf("%.2f× (%.2f–%.2f)", ci.Center, ci.Lo, ci.Hi)
		if q := uc.SpeedupP50Pooled; q > 0 && (q < ci.Lo || q > ci.Hi) {
			speed += fmt.Sprintf(" paired; %.2f× from the pooled p50s", q) // they disagree: the row says so
		}
	}
	if cpu {
		saved = " – |"
		if uc.CPUSaving != nil && uc.CPUSaving.ServerNsPerOp != nil {
			saved = fmt.Sprintf(" %.1f µs |", *uc.CPUSaving.ServerNsPerOp/1e3)
		}
	}
	tcp, unix = u.fmt(float64(bs.Latency.P50))+" "+u.name, u.fmt(float64(us.Latency.P50))+" "+u.name
	verdict = words.ShortVerdict(s, &uc)
	if uc.VerdictKind == results.NoResult || uc.VerdictKind == "" {
		tcp, unix, speed = okOrDash(bs, tcp), okOrDash(us, unix), "–"
	}
	if _, ok := s.SideOf(results.Socket()); !ok {
		verdict = "the unix path was not measured (its warnings say why; its other paths below)"
	}
	if failed, ok := caseFailed(r, s); ok {
		tcp, unix, speed, verdict = "–", "–", "–", failed
		if cpu {
			saved = " – |"
		}
	}
	return tcp, unix, speed, verdict, saved
}

// writePlotLink links the picture, when the run drew one.
func writePlotLink(b *strings.Builder, r *results.Report) {
	if r.Plot != "" {
		fmt.Fprintf(b, "![Each case's speedup at p50 with its 95%% interval](%s)\n\n", r.Plot)
	}
}

func writeMethod(b *strings.Builder, r *results.Report) {
	c := r.Config
	var names []string
	for _, t := range r.Targets {
		name := t.Name
		if t.Server.Product != "" {
			name = fmt.Sprintf("%s (%s)", t.Name, t.Server)
		}
		names = append(names, name)
	}
	how := "one connection per transport (per worker, when several ran at once)"
	if strings.Contains(c.Scenario, "connect") {
		how += ", or a new connection per operation in the connect scenario"
	}
	timed := plural(c.N, "timed operation")
	if slices.ContainsFunc(c.Concurrency, func(w int) bool { return w > 1 }) {
		timed += " shared by a case's workers (each worker's warm-up its own)"
	}
	if c.DurationNs > 0 {
		timed = "timed operations for " + time.Duration(c.DurationNs).String()
	}
	routes := "127.0.0.1 TCP and over the server's Unix domain socket"
	if len(c.Paths) > 2 {
		how, routes = strings.Replace(how, "per transport", "per path", 1), pathList(c.Paths)
	}
	fmt.Fprintf(b, "dbsock measured %s from %s%s on %s: "+
		"%s, then %s, each timed on its own, "+
		"over %s, in %s. Before timing, each connection's transport "+
		"was verified on the server side. Servers were supplied by the %s provider. %s\n\n",
		strings.Join(names, ", "), clientsPhrase(r), clientPlace(c.Client), how, plural(c.Warmup, "untimed warm-up operation"), timed,
		routes, roundsPhrase(r), c.Provider, placementSentence(r))
	writeOverheads(b, r)
	writeStatsMethod(b, r)
}

// writeStatsMethod says how the timed ops were split into blocks and how
// the speedup and its interval were computed, with the sources.
func writeStatsMethod(b *strings.Builder, r *results.Report) {
	c := r.Config
	if c.Blocks > 0 && len(c.Paths) > 2 {
		fmt.Fprintf(b, "Within each round, every path's connections stayed open and the timed operations ran as %s, one block per path; "+
			"the order of each group's blocks was drawn at random (seed %d: the same seed repeats the order). Each further path is compared with %s in the same way, over the same groups (the table under the headline). ",
			plural(c.Blocks, "block group"), c.Seed, baseOf(r).Label())
	} else if c.Blocks > 0 {
		fmt.Fprintf(b, "Within each round, both transports' connections stayed open and the timed operations ran as %s, "+
			"interleaved in TCP/Unix pairs; which block of a pair went first was drawn at random (seed %d: the same seed repeats the order). ",
			plural(c.Blocks, "block pair"), c.Seed)
	}
	ratio := baseOf(r).Label() + "/Unix"
	if c.Instances > 1 {
		b.WriteString("Each server instance's speedup is the median of its paired ratios " + ratio + " (of the blocks' p50s, or means), which one bad block cannot move; " +
			"the speedup reported is the median of the instances' speedups, and its 95% confidence interval is the distribution-free interval of a median from order statistics " +
			"over the instances (Conover, *Practical Nonparametric Statistics*, 1999, §3.2), never over block pairs pooled across instances, which would take the pairs of one instance " +
			"for independent ones (Kalibera and Jones, *Rigorous Benchmarking in Reasonable Time*, ISMM 2013); the sign test is over the instances too. " +
			"The interval covers what varies within this run (server instances, connections, blocks), not the machine's drift over minutes: " +
			"to cover that, repeat the run at other times and compare the runs (dbsock compare). ")
	} else {
		b.WriteString("The speedup is the median of the paired ratios " + ratio + " (of the blocks' p50s, or means), which one bad block cannot move; " +
			"its 95% confidence interval is the distribution-free interval of a median from order statistics (Conover, *Practical Nonparametric Statistics*, 1999, §3.2); " +
			"it covers this one server instance. ")
	}
	fmt.Fprintf(b, "A verdict names a winner when the whole interval lies on one side of 1, \"no meaningful difference\" when it lies within ±%.0f%%, and \"undecided\" otherwise",
		100*results.Band)
	if n := words.Comparisons(r); n > 1 {
		fmt.Fprintf(b, "; with %d comparisons in this report, the sign test's p-values are adjusted by Holm's method (Holm, 1979) before a winner is named", n)
	}
	b.WriteString(". Blocks whose p50 lies far from their transport's others (modified z-score above 3.5, Iglewicz and Hoaglin, 1993, and over 20% from the median) are flagged as noisy and listed, not dropped; no single operation is ever trimmed.")
	if c.Precision > 0 {
		fmt.Fprintf(b, " Rounds were added until the p50 speedup's interval was within ±%.1f%% or %s had passed.", 100*c.Precision, time.Duration(c.MaxDurationNs))
	}
	b.WriteString("\n\n")
}

func writeTarget(b *strings.Builder, r *results.Report, t results.Target) {
	title := t.Name
	if t.Server.Product != "" {
		title += " — " + t.Server.String()
	}
	fmt.Fprintf(b, "### %s\n\n", title)
	if t.Server.Detail != "" && t.Server.Product != "" {
		fmt.Fprintf(b, "- Server: %s (%s)\n", t.Server, t.Server.Detail)
	}
	if t.Origin != "" {
		fmt.Fprintf(b, "- Supplied by: %s provider, %s\n", t.Provider, t.Origin)
	}
	if t.Serving != "" {
		fmt.Fprintf(b, "- Serving: %s\n", t.Serving)
	}
	if t.Image != "" {
		fmt.Fprintf(b, "- Image: %s (%s)\n", t.Image, shortID(t.ImageID))
	}
	if t.NetworkMode != "" {
		fmt.Fprintf(b, "- Network: %s; socket directory on the host: %s\n", t.NetworkMode, t.SocketDir)
	}
	if t.ServerCPUs != "" {
		fmt.Fprintf(b, "- Server CPUs: %s\n", t.ServerCPUs)
	}
	if t.Client != "" {
		fmt.Fprintf(b, "- Client: dbsock's client (its own Go agent, which did and timed the ops) ran in %s\n", t.Client)
	}
	if t.CPUGroup != "" {
		fmt.Fprintf(b, "- CPU cgroup: %s\n", t.CPUGroup)
	}
	if t.Operation != "" {
		fmt.Fprintf(b, "- Operation: %s\n", t.Operation)
	}
	for _, sk := range t.Skipped {
		fmt.Fprintf(b, "- Not measured from %s: %s\n", sk.Stack, sk.Reason)
	}
	cases := r.Cases(t.Name)
	for _, c := range cases {
		if c.Scenario == "connect" && t.ConnectPhase != "" {
			fmt.Fprintf(b, "- Connect scenario: each op opens a connection (%s), does one lookup, and closes it\n", t.ConnectPhase)
			break
		}
	}
	writeEndpoints(b, r, t)
	if rows := distinctRows(r, t.Name); rows != "" {
		of := ""
		if t.Rows > 0 {
			of = fmt.Sprintf(" (of %s)", humanize.Comma(int64(t.Rows)))
		}
		fmt.Fprintf(b, "- Rows read per round: %s%s\n", rows, of)
	}
	b.WriteString("\n")
	for _, w := range t.Warnings {
		fmt.Fprintf(b, "> **Warning:** %s\n\n", w)
	}
	if t.Error != "" {
		fmt.Fprintf(b, "> **Incomplete:** %s\n\n", oneLine(t.Error))
	}
	if len(cases) > 1 {
		writeSweep(b, cases)
	}
	for i := range cases {
		sum := &cases[i]
		if len(cases) > 1 || !sum.Plain() || len(r.Config.ValueSizes) > 0 {
			fmt.Fprintf(b, "#### %s: %s\n\n", t.Name, sum.Label())
		}
		writeCase(b, r, sum)
	}
}

// writeSweep gives one row per case: how the speedup moves across a sweep.
func writeSweep(b *strings.Builder, cases []results.Summary) {
	if !slices.ContainsFunc(cases, func(s results.Summary) bool { _, ok := s.SideOf(results.Socket()); return ok }) {
		return // no case measured the socket (a hop whose leg to the server is TCP only): each case's own table follows
	}
	speedup := "p50 speedup"
	if len(cases) > 0 && cases[0].Baseline() != results.DefaultBaseline() {
		speedup = "Unix p50 speedup over " + cases[0].Baseline().Label()
	}
	b.WriteString("| case | TCP p50 | Unix p50 | " + speedup + " | 95% CI | TCP ops/s | Unix ops/s | TCP ops per server CPU-s | Unix ops per server CPU-s | errors | verdict |\n")
	b.WriteString("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|\n")
	for _, s := range cases {
		tcp, unix, uc := s.Side(results.DefaultBaseline()), s.Side(results.Socket()), s.Against(results.Socket())
		u := pickUnit(tcp.Latency.P50, unix.Latency.P50)
		ci := "–"
		if c := uc.SpeedupP50CI; c != nil {
			ci = fmt.Sprintf("%.2f–%.2f", c.Lo, c.Hi)
		}
		fmt.Fprintf(b, "| %s | %s %s | %s %s | %.2f× | %s | %.0f | %.0f | %s | %s | %d | %s |\n", cell(s.Label()),
			u.fmt(float64(tcp.Latency.P50)), u.name, u.fmt(float64(unix.Latency.P50)), u.name,
			uc.SpeedupP50, ci, tcp.OpsPerSec, unix.OpsPerSec, perServerSecond(tcp.CPU), perServerSecond(unix.CPU),
			tcp.Errors+unix.Errors, words.ShortVerdict(&s, &uc))
	}
	b.WriteString("\n")
	writeEfficiency(b, cases)
}

// writeCase gives one case's table, phases, speedup, verdict and warnings.
func writeCase(b *strings.Builder, r *results.Report, sum *results.Summary) {
	uc := sum.Against(results.Socket())
	unit := pickUnit(sum.Side(results.DefaultBaseline()).Latency.P50, sum.Side(results.Socket()).Latency.P50)
	fmt.Fprintf(b, "| transport | n | errors | min | p50 | p90 | p99 | p99.9 | max | mean | stddev | ops/s |\n")
	fmt.Fprintf(b, "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	type row struct {
		name string
		side results.Side
	}
	var rows []row
	for _, ps := range sum.Sides {
		rows = append(rows, row{pathLabel(ps.Path), ps.Side})
	}
	for _, row := range rows {
		l := row.side.Latency
		fmt.Fprintf(b, "| %s | %d | %d | %s | %s | %s | %s | %s | %s | %s | %s | %.0f |\n",
			row.name, row.side.N, row.side.Errors,
			unit.fmt(float64(l.Min)), unit.fmt(float64(l.P50)), unit.fmt(float64(l.P90)),
			unit.fmt(float64(l.P99)), unit.fmt(float64(l.P999)), unit.fmt(float64(l.Max)),
			unit.fmt(l.Mean), unit.fmt(l.StdDev), row.side.OpsPerSec)
	}
	what := "all rounds pooled"
	if sum.Concurrency > 1 {
		what = fmt.Sprintf("all rounds and all %d workers pooled; ops/s is all workers together", sum.Concurrency)
	}
	if sum.Rate > 0 {
		what += "; latency counts from when each op was due (corrected for coordinated omission)"
	}
	fmt.Fprintf(b, "\nLatencies in %s, %s.", unit.name, what)
	if uc.SpeedupP50 > 0 {
		fmt.Fprintf(b, " **Unix speedup (%s/Unix, paired block by block): %.2f× at p50, %.2f× at mean.**", sum.Baseline().Label(), uc.SpeedupP50, uc.SpeedupMean)
		if q := uc.SpeedupP50Pooled; q > 0 && math.Abs(q/uc.SpeedupP50-1) >= 0.005 {
			fmt.Fprintf(b, " The pooled p50s in the table give %.2f×: they pool blocks from different moments of the run, which the paired figure compares side by side.", q)
		}
	}
	b.WriteString("\n\n")
	writePhases(b, sum, unit)
	writePerLookup(b, sum)
	writeCPUFrom(b, sum, r.Config.Client)
	writeVerdict(b, sum)
	for _, c := range sum.Comparisons {
		if c.Path != results.Socket() {
			fmt.Fprintf(b, "**%s against %s: %s.**\n\n", pathLabel(c.Path), c.Baseline.Label(), c.Verdict)
		}
	}
	for _, w := range sum.Warnings {
		fmt.Fprintf(b, "> **Warning:** %s\n\n", w)
	}
	writeRounds(b, r, sum, unit)
}

// writePerLookup gives, for a pipelined case, latency and throughput per
// lookup (an op is a batch of Pipeline lookups in one round trip).
func writePerLookup(b *strings.Builder, sum *results.Summary) {
	k := float64(sum.Lookups())
	if k <= 1 {
		return
	}
	tcp, unix := sum.Side(results.DefaultBaseline()), sum.Side(results.Socket())
	u := pickUnit(int64(float64(tcp.Latency.P50)/k), int64(float64(unix.Latency.P50)/k))
	fmt.Fprintf(b, "Each op is a batch of %d lookups in one round trip. **Per lookup: p50 TCP %s %s, Unix %s %s; throughput TCP %.0f, Unix %.0f lookups/s.**\n\n",
		sum.Pipeline, u.fmt(float64(tcp.Latency.P50)/k), u.name, u.fmt(float64(unix.Latency.P50)/k), u.name,
		tcp.OpsPerSec*k, unix.OpsPerSec*k)
}

// writePhases compares the timed parts of an op, where the case has them.
func writePhases(b *strings.Builder, sum *results.Summary, unit unit) {
	tcpSide, unixSide := sum.Side(results.DefaultBaseline()), sum.Side(results.Socket())
	if len(tcpSide.Phases) == 0 && len(unixSide.Phases) == 0 {
		return
	}
	b.WriteString("| part of the op | TCP p50 | Unix p50 | TCP mean | Unix mean | p50 speedup |\n|---|--:|--:|--:|--:|--:|\n")
	row := func(name string, tcp, unix results.Latency) {
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %.2f× |\n", name, unit.fmt(float64(tcp.P50)), unit.fmt(float64(unix.P50)),
			unit.fmt(tcp.Mean), unit.fmt(unix.Mean), speedup(float64(tcp.P50), float64(unix.P50)))
	}
	for _, name := range phaseOrder {
		tcp, okT := tcpSide.Phases[name]
		unix, okU := unixSide.Phases[name]
		if okT || okU {
			row(phaseTitles[name], tcp, unix)
		}
	}
	total := "whole op"
	if sum.Rate > 0 {
		total = "from when due (corrected)"
	}
	row(total, tcpSide.Latency, unixSide.Latency)
	fmt.Fprintf(b, "\n(%s)\n\n", unit.name)
	writePathPhases(b, sum, unit)
}

func speedup(tcp, unix float64) float64 {
	if tcp <= 0 || unix <= 0 {
		return 0
	}
	return tcp / unix
}

func writeThresholds(b *strings.Builder, r *results.Report) {
	if len(r.Thresholds) == 0 {
		return
	}
	b.WriteString("## Thresholds\n\n| threshold | result | actual |\n|---|---|---|\n")
	for _, th := range r.Thresholds {
		res := "passed"
		if !th.OK {
			res = "**violated**"
		}
		fmt.Fprintf(b, "| %s | %s | %s |\n", cell(codeSpan(th.Expr)), res, cell(th.ActualText))
	}
	b.WriteString("\n")
}

// serverColumn is the headline's server for t: the server, and, when it
// ran from one of dbsock's own images (make images builds them as
// dbsock/NAME, the stand-ins for official images that cannot be pulled),
// that image: the product and what is measured differ from the official
// image's.
func serverColumn(t results.Target) string {
	s := t.Server.String()
	if strings.HasPrefix(t.Image, "dbsock/") {
		s += " (dbsock's stand-in image " + t.Image + ", not the official one)"
	}
	return s
}

// usedDrivers are the Go client libraries of the environment that did a
// run's ops (the library its Go client names), sorted: the binary carries
// every target's, and a mysql-only run used one. A report whose runs name
// no client (older dbsock) lists every library it carries.
func usedDrivers(r *results.Report) []string {
	used, named := map[string]bool{}, false
	for _, run := range r.Runs {
		if run.Client == nil {
			continue
		}
		named = true
		if run.Client.Language == "go" {
			used[run.Client.Library] = true
		}
	}
	var out []string
	for _, k := range sortedKeys(r.Environment.Drivers) {
		if used[k] || !named {
			out = append(out, k)
		}
	}
	return out
}

func shortID(id string) string {
	id = strings.TrimPrefix(id, "sha256:")
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

func shortCommit(c string) string {
	if len(c) > 12 {
		return "(" + c[:12] + ")"
	}
	if c != "" {
		return "(" + c + ")"
	}
	return ""
}

// roundsPhrase says how many server instances and rounds each case ran,
// and what an instance was: a restart only of a server dbsock started.
func roundsPhrase(r *results.Report) string {
	c := r.Config
	rounds := "1 round"
	if c.Rounds > 1 {
		rounds = fmt.Sprintf("%d rounds, each with fresh connections and a fresh warm-up", c.Rounds)
	}
	if c.Instances > 1 {
		what := "each server dbsock started was restarted between them, its data kept"
		if len(externalTargets(r)) > 0 {
			what = restarted(r) // not of a server dbsock did not start
		}
		return fmt.Sprintf("%d server instances (%s), with %s each", c.Instances, what, rounds)
	}
	return rounds
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// orNotPinned is a CPU list, or "not pinned" for none.
// clientSuffix names the client's place in the Run row when it was not
// the dbsock process itself.
func clientSuffix(client string) string {
	if client == "" || client == "host" {
		return ""
	}
	return ", client=" + client
}

func orNotPinned(s string) string {
	if s == "" {
		return "not pinned"
	}
	return s
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// unit is a display unit for latencies.
type unit struct {
	name string
	ns   float64
	prec int
}

func (u unit) fmt(ns float64) string { return fmt.Sprintf("%.*f", u.prec, ns/u.ns) }

// pickUnit chooses one unit for a table from its p50s, so that columns compare.
func pickUnit(p50s ...int64) unit {
	var lo int64
	for _, v := range p50s {
		if v > 0 && (lo == 0 || v < lo) {
			lo = v
		}
	}
	switch {
	case lo >= int64(10*time.Millisecond):
		return unit{"ms", 1e6, 1}
	case lo >= int64(time.Millisecond):
		return unit{"ms", 1e6, 2}
	case lo >= int64(100*time.Microsecond):
		return unit{"µs", 1e3, 0}
	case lo >= int64(time.Microsecond):
		return unit{"µs", 1e3, 1}
	}
	return unit{"ns", 1, 0}
}
