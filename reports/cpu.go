package reports

import (
	"fmt"
	"strings"

	"github.com/dbsock/dbsock/results"
)

// perServerSecond is how many ops one second of server CPU served.
func perServerSecond(c *results.CPU) string {
	if c == nil || c.ServerNsPerOp == nil || *c.ServerNsPerOp <= 0 {
		return "–"
	}
	return fmt.Sprintf("%.0f", 1e9 / *c.ServerNsPerOp)
}

// writeEfficiency says, for a concurrency sweep, the highest throughput
// each transport reached, and how much more work per server core Unix did
// there.
func writeEfficiency(b *strings.Builder, cases []results.Summary) {
	conc := map[int]bool{}
	for _, s := range cases {
		conc[s.Concurrency] = true
	}
	if len(conc) < 2 {
		return
	}
	best := func(side func(results.Summary) results.Side) (results.Summary, float64) {
		var at results.Summary
		top := 0.0
		for _, s := range cases {
			if v := side(s).OpsPerSec; v > top {
				at, top = s, v
			}
		}
		return at, top
	}
	def, sock := results.DefaultBaseline(), results.Socket()
	tcpAt, tcpTop := best(func(s results.Summary) results.Side { return s.Side(def) })
	unixAt, unixTop := best(func(s results.Summary) results.Side { return s.Side(sock) })
	fmt.Fprintf(b, "Highest throughput: TCP %.0f ops/s (%s), Unix %.0f ops/s (%s).", tcpTop, tcpAt.Label(), unixTop, unixAt.Label())
	t, u := tcpAt.Side(def).CPU, unixAt.Side(sock).CPU
	if t != nil && u != nil && t.ServerNsPerOp != nil && u.ServerNsPerOp != nil && *u.ServerNsPerOp > 0 {
		fmt.Fprintf(b, " There, Unix did %.0f%% more work per server CPU-second than TCP (%s against %s ops).",
			100*(*t.ServerNsPerOp / *u.ServerNsPerOp - 1), perServerSecond(u), perServerSecond(t))
	}
	b.WriteString("\n\n")
}

// writeCPU gives what each side spent per op over the timed blocks, and
// what Unix saved.
func writeCPU(b *strings.Builder, sum *results.Summary) { writeCPUFrom(b, sum, "") }

// clientMeter says whose CPU time the client's is: dbsock's process, an
// agent's process tree, dbsock's own agent's (a fresh process for each
// server instance), or, with the client in a container (place, the
// report's config.client), dbsock's own agent's there.
func clientMeter(sum *results.Summary, place string) string {
	switch {
	case sum.Stack != "":
		return "the " + sum.Stack + " agent's process tree (every thread's /proc schedstat, status and io), which did the ops"
	case place == "container":
		return "dbsock's own agent's process tree in the client container (every thread's /proc schedstat, status and io), which did the ops"
	case sum.Client != nil && sum.Client.FreshProcess:
		return "dbsock's own agent's process tree, a fresh process for each server instance (every thread's /proc schedstat, status and io), which did the ops"
	}
	return "dbsock's whole process (getrusage, /proc/self/io)"
}

// writeCPUFrom is writeCPU of a report whose client ran at place.
func writeCPUFrom(b *strings.Builder, sum *results.Summary, place string) {
	tcp, unix := sum.Side(results.DefaultBaseline()).CPU, sum.Side(results.Socket()).CPU
	if tcp == nil || unix == nil {
		return
	}
	type row struct {
		name string
		c    *results.CPU
	}
	var rows []row
	for _, ps := range sum.Sides {
		if ps.CPU != nil {
			rows = append(rows, row{pathLabel(ps.Path), ps.CPU})
		}
	}
	uncounted := false
	server := func(c *results.CPU) (string, string, string, string) {
		if c.ServerNsPerOp == nil {
			return "–", "–", "–", "–"
		}
		perSec, sys := "–", "–"
		if *c.ServerNsPerOp > 0 {
			perSec = fmt.Sprintf("%.0f", 1e9 / *c.ServerNsPerOp)
		}
		if c.ServerSyscalls == nil {
			sys = "–" // not read (another user's server)
		} else if _, counted := c.SyscallsCounted(); counted {
			sys = fmt.Sprintf("%.2f", *c.ServerSyscallsPerOp)
		} else {
			sys, uncounted = "not counted", true
		}
		csw := "–" // not counted by the OS (macOS)
		if c.ServerCswPerOp != nil {
			csw = fmt.Sprintf("%.2f", *c.ServerCswPerOp)
		}
		return fmt.Sprintf("%.1f µs", *c.ServerNsPerOp/1e3), csw, sys, perSec
	}
	b.WriteString("| transport | client CPU/op | client csw/op | client read+write calls/op | server CPU/op | server csw/op | server read+write calls/op | ops per server CPU-second | waited for a CPU/op: client / server |\n" +
		"|---|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, row := range rows {
		sns, scsw, ssys, perSec := server(row.c)
		csys := "not counted"
		if counted, _ := row.c.SyscallsCounted(); counted {
			csys = fmt.Sprintf("%.2f", *row.c.ClientSyscallsPerOp)
		} else {
			uncounted = true
		}
		fmt.Fprintf(b, "| %s | %.1f µs | %.2f | %s | %s | %s | %s | %s | %s / %s |\n", row.name, row.c.ClientNsPerOp/1e3, row.c.ClientCswPerOp,
			csys, sns, scsw, ssys, perSec, waitText(row.c.ClientWaitNsPerOp), waitText(row.c.ServerWaitNsPerOp))
	}
	fmt.Fprintf(b, "\nCPU time (user + system), context switches (voluntary + involuntary) and read/write system calls (as /proc/PID/io counts them: "+
		"read- and write-family calls, not recv/send) over the timed blocks only, per successful op; the time each side was runnable but waited for a CPU (its threads' schedstat), "+
		"which on a CPU client and server share is mostly the server waiting for the client to give the CPU up after its request. Client: %s. Server: %s.",
		clientMeter(sum, place), tcp.ServerMeasuredBy)
	if uncounted {
		b.WriteString(" \"Not counted\": the process counted no read or write call over its ops, so it moves its socket's bytes with calls /proc/PID/io does not count (recv/send); its calls are not known, not zero.")
	}
	var hop []string
	for _, row := range rows {
		if row.c.HopNsPerOp != nil {
			hop = append(hop, fmt.Sprintf("%s %.1f µs", row.name, *row.c.HopNsPerOp/1e3))
		}
	}
	if len(hop) > 0 {
		fmt.Fprintf(b, " Of the server's CPU per op, the hop in front of it (%s) spent: %s.", tcp.HopMeasuredBy, strings.Join(hop, ", "))
	}
	if s := sum.Against(results.Socket()).CPUSaving; s != nil {
		over := ""
		if base := sum.Baseline(); base != results.DefaultBaseline() {
			over = " over " + base.Label()
		}
		fmt.Fprintf(b, " **Unix%s %s", over, cpuChange(s.ClientNsPerOp, "client", true))
		if sv := s.ServerNsPerOp; sv != nil {
			fmt.Fprintf(b, " and %s", cpuChange(*sv, "server", (*sv <= -50) != (s.ClientNsPerOp <= -50)))
		}
		b.WriteString(".**")
	}
	b.WriteString("\n\n")
}

// cpuChange says a CPU saving of ns per op on side ("client", "server")
// as what Unix does: "saves 1.7 µs of client CPU per op", or, for a
// negative saving, "costs 4.1 µs more client CPU per op"; with verb false
// the verb is left to the clause before it ("2.3 µs of server CPU per op").
func cpuChange(ns float64, side string, verb bool) string {
	if ns <= -50 { // -0.05 µs and below: what rounds to a cost
		s := fmt.Sprintf("%.1f µs more %s CPU per op", -ns/1e3, side)
		if verb {
			s = "costs " + s
		}
		return s
	}
	s := fmt.Sprintf("%.1f µs of %s CPU per op", max(ns, 0)/1e3, side)
	if verb {
		s = "saves " + s
	}
	return s
}

// phaseTitles name the phases in reports.
var phaseTitles = map[string]string{
	"connect":     "connect phase",
	"dial":        "— of which socket connect",
	"tls":         "— of which TLS set-up (its request, if any, and handshake)",
	"login":       "— of which protocol handshake and login",
	"query":       "query phase",
	"uncorrected": "from actual start (not corrected)",
}

// phaseOrder is the order of the phases in reports.
var phaseOrder = []string{"connect", "dial", "tls", "login", "query", "uncorrected"}

// waitText is a time waited for a CPU per op, or a dash where it was not
// read.
func waitText(ns *float64) string {
	if ns == nil {
		return "–"
	}
	return fmt.Sprintf("%.1f µs", *ns/1e3)
}
