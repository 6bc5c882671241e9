package results

import (
	"fmt"
	"time"
)

// SocketWakesClient says that over the Unix socket the client's threads
// were switched out more often per op than over the baseline, and what the
// server's CPU per op did meanwhile: the evidence, from the client's own
// counters, that the client is woken for write space on the socket (an
// event loop that keeps each socket registered for EPOLLOUT, as Go's
// netpoller does, is woken whenever the server reads a request from a
// Unix socket, and the server's CPU runs that wake-up), which takes back
// part of what the socket saves the server (docs/method.md, "Why Go's
// capacity gain on SQL servers is about 1").
const SocketWakesClient WarningKind = "socket_wakes_client"

// The least rise in the client's context switches per op, over the socket
// against the baseline, that SocketWakesClient reads as extra wake-ups:
// both at once, so that neither a rounding of a small count nor a small
// share of a large one passes; and the most the socket may have saved the
// server of its CPU per op for the wake-ups to be what the case shows (a
// client woken more that still saves the server as much as a blocking
// client does needs no words). Measured on the 2-vCPU guests of
// docs/method.md: Go's pgx at 3,000 ops/s over 16 connections, 5.31 over
// TCP and 6.35 over the socket and the server's CPU per op no less; C's
// libpq 2.14 and 2.14, and 15% less; at rest, on one CPU, Go's clients
// 1.17 and 1.58 with 21% less, C's 14 to 25% less in every run.
const (
	minExtraSwitches      = 0.2
	minExtraSwitchesShare = 0.1
	maxSavedShare         = 0.1
)

// explainWakeups adds SocketWakesClient to each case whose client switched
// out more often per op over the Unix socket than over its baseline.
func (r *Report) explainWakeups() {
	sock := Socket()
	for i := range r.Summary {
		s := &r.Summary[i]
		base, ok := s.SideOf(s.Baseline())
		unix, hasUnix := s.SideOf(sock)
		if !ok || !hasUnix || s.Baseline() == sock {
			continue
		}
		goClient := s.Stack == "" || (s.Client != nil && s.Client.Language == "go")
		if w, ok := wakeupWarning(s.Baseline().Label(), base.CPU, unix.CPU, goClient); ok {
			s.Warnings = append(s.Warnings, w)
		}
	}
}

// wakeupWarning is SocketWakesClient from the baseline's CPU figures b
// (its path named base) and the socket's u, when the client's context
// switches per op rose over the socket by at least minExtraSwitches and
// minExtraSwitchesShare of the baseline's, and the socket saved the
// server less than maxSavedShare of its CPU per op. goClient says that
// the client is Go's, whose cause was traced (docs/method.md); of another
// client the words say what was counted and leave the cause open.
func wakeupWarning(base string, b, u *CPU, goClient bool) (Warning, bool) {
	if b == nil || u == nil || b.Ops <= 0 || u.Ops <= 0 || b.ClientCsw <= 0 {
		return Warning{}, false
	}
	if b.ServerNsPerOp == nil || u.ServerNsPerOp == nil || *b.ServerNsPerOp <= 0 || *u.ServerNsPerOp <= 0 {
		return Warning{}, false
	}
	extra := u.ClientCswPerOp - b.ClientCswPerOp
	if extra < minExtraSwitches || extra < minExtraSwitchesShare*b.ClientCswPerOp {
		return Warning{}, false
	}
	bs, us := *b.ServerNsPerOp, *u.ServerNsPerOp
	if (bs-us)/bs >= maxSavedShare {
		return Warning{}, false
	}
	server := fmt.Sprintf("the server spent %s of CPU per op over %s and %s over the socket, %s", usOf(bs), base, usOf(us), savedWords(bs, us))
	why := "Go's netpoller keeps each socket registered for write space (EPOLLOUT, edge-triggered), so it is woken whenever the server reads a request from a Unix socket, and that wake-up runs on the server's CPU (unix_write_space); over TCP it is not. " +
		"So the socket saves the server less CPU under this client than under one that waits in a blocking read (C's libraries, pgbench, sysbench): the client's cost, which an application on this client pays too, not the route's (docs/method.md)"
	if !goClient {
		why = "A client whose event loop keeps each socket registered for write space (as Go's netpoller does) is woken whenever the server reads a request from a Unix socket, at the server's CPU's cost; dbsock has traced that for Go's client, not for this one, " +
			"so the counts are what it shows here: a client woken more over the socket leaves the server less of what the socket saves it (docs/method.md)"
	}
	return Warn(SocketWakesClient, "The Unix socket woke this client more often than %s: its threads were switched out %.2f times per op over the socket against %.2f over %s (%.2f more; context switches, read from its /proc), and %s. %s",
		base, u.ClientCswPerOp, b.ClientCswPerOp, base, extra, server, why), true
}

// usOf is ns of CPU in µs, to a tenth.
func usOf(ns float64) string { return time.Duration(ns).Round(100 * time.Nanosecond).String() }

// savedWords says how much less the socket's server CPU per op u is than
// the baseline's b.
func savedWords(b, u float64) string {
	saved := 100 * (b - u) / b
	switch {
	case saved >= 0.5:
		return fmt.Sprintf("%.0f%% less", saved)
	case saved <= -0.5:
		return fmt.Sprintf("%.0f%% more", -saved)
	}
	return "no less"
}
