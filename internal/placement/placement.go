// Package placement controls and reads back which CPUs the client and the
// servers run on. On small machines CPU placement moves latency more than
// the transport does (waking a server on another CPU costs tens of
// microseconds), so dbsock lets the user fix it and always reports it.
package placement

import (
	"fmt"
	"runtime"
	"sort"
	"strconv"
	"strings"

	"github.com/dbsock/dbsock/internal/setting"
)

// Modes accepted by --placement.
var Modes = []string{"auto", "none", "same", "split"}

// Placement is a requested CPU placement; nil CPU lists mean "not pinned".
type Placement struct {
	Mode   string
	Client []int
	Server []int
	// Reason says why (auto), for the report.
	Reason string
}

// Resolve turns --placement and the explicit lists into a Placement.
// "auto" (the default) asks Choose for this machine; "same" puts client and
// servers on CPU 0; "split" puts the client on CPU 0 and the servers on
// CPU 1. Explicit lists override the mode's choice.
func Resolve(mode, clientList, serverList string) (Placement, error) {
	return resolve(mode, clientList, serverList, Supported, Choose)
}

// ResolveAtRate is Resolve for a run at a rate (an open loop): its auto
// is ChooseAtRate.
func ResolveAtRate(mode, clientList, serverList string) (Placement, error) {
	return resolve(mode, clientList, serverList, Supported, ChooseAtRate)
}

// resolve is Resolve on an OS that has CPU affinity (supported) or not:
// without it auto pins nothing and says why, and the other modes and CPU
// lists are refused.
func resolve(mode, clientList, serverList string, supported bool, choose func([]CPU) (Placement, error)) (Placement, error) {
	p := Placement{Mode: mode}
	if !supported && (clientList != "" || serverList != "" || (mode != "" && mode != "auto" && mode != "none")) {
		return p, setting.Err("%s %s, %s and %s: %w", setting.Placement, orAuto(mode), setting.ClientCPU, setting.ServerCPU, ErrNoAffinity)
	}
	switch mode {
	case "", "auto":
		if !supported {
			return Placement{Mode: "none", Reason: "auto: " + ErrNoAffinity.Error() + ", so nothing is pinned"}, nil
		}
		cpus, err := ReadTopology()
		if err != nil {
			return p, err
		}
		if p, err = choose(cpus); err != nil {
			return p, err
		}
	case "none":
	case "same":
		p.Client, p.Server = []int{0}, []int{0}
	case "split":
		if runtime.NumCPU() < 2 {
			return p, setting.Err("%s split needs 2 CPUs; this machine has %d", setting.Placement, runtime.NumCPU())
		}
		p.Client, p.Server = []int{0}, []int{1}
	default:
		return p, setting.Err("%s %q is not accepted; use one of: %s", setting.Placement, mode, strings.Join(Modes, ", "))
	}
	var err error
	if clientList != "" {
		if p.Client, err = ParseList(clientList); err != nil {
			return p, setting.Err("%s: %w", setting.ClientCPU, err)
		}
		if p.Mode == "none" {
			p.Mode = "custom"
		}
	}
	if serverList != "" {
		if p.Server, err = ParseList(serverList); err != nil {
			return p, setting.Err("%s: %w", setting.ServerCPU, err)
		}
		if p.Mode == "none" {
			p.Mode = "custom"
		}
	}
	return p, nil
}

// ParseList parses a CPU list such as "0", "0,2" or "0-3" and checks that
// every CPU exists on this machine.
func ParseList(s string) ([]int, error) { return parseList(s, runtime.NumCPU()) }

// parseList reads a CPU list whose CPUs are all below limit.
func parseList(s string, limit int) ([]int, error) {
	seen := map[int]bool{}
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(part), "-")
		a, err := strconv.Atoi(lo)
		b := a
		if err == nil && isRange {
			b, err = strconv.Atoi(hi)
		}
		if err != nil || a < 0 || b < a {
			return nil, fmt.Errorf("CPU list %q is not like 0, 0,2 or 0-3", s)
		}
		for c := a; c <= b; c++ {
			if c >= limit {
				return nil, fmt.Errorf("CPU %d in %q does not exist; this machine has CPUs 0-%d", c, s, limit-1)
			}
			seen[c] = true
		}
	}
	out := make([]int, 0, len(seen))
	for c := range seen {
		out = append(out, c)
	}
	sort.Ints(out)
	return out, nil
}

// FormatList renders a CPU list as "0,1"; an empty list as "".
func FormatList(cpus []int) string {
	parts := make([]string, len(cpus))
	for i, c := range cpus {
		parts[i] = strconv.Itoa(c)
	}
	return strings.Join(parts, ",")
}

func orAuto(mode string) string {
	if mode == "" {
		return "auto"
	}
	return mode
}

// ParseListUpTo parses a CPU list as a report recorded it, on a machine
// of limit CPUs (0: unknown); "" is no list.
func ParseListUpTo(s string, limit int) ([]int, error) {
	if s == "" {
		return nil, nil
	}
	if limit <= 0 {
		limit = 1 << 16
	}
	return parseList(s, limit)
}
