package main

import (
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/dbsock/dbsock/agents"
	"github.com/dbsock/dbsock/scenarios"
)

// loopOptions are the flags of each case's timing loop (scenarios.Settings,
// with the sweep's --duration and --rate and the workload's --keys and
// --op).
type loopOptions struct {
	n, warmup, rounds int
	blocks            int
	seed              uint64
	precisionSpec     string
	precision         float64
	maxDuration       time.Duration
	opTimeout         time.Duration
}

// serverOptions are the flags that say where the servers come from.
type serverOptions struct {
	provider string
	images   []string // --image TARGET=REF
	pids     []string // --server-pid TARGET=PID
	keep     bool
}

// placementOptions are the CPU placement's flags.
type placementOptions struct {
	mode, clientCPU, serverCPU string
}

// clientOptions are the client side's flags: where the timing loop runs
// (--client, --client-binary) and which client stacks measure (--clients).
type clientOptions struct {
	place  string
	binary string
	stacks []string
}

// bind binds run's flags on f, and each target's own flags from the
// registry.
func (o *runOptions) bind(f *pflag.FlagSet) {
	f.SortFlags = false
	f.Var(newCount(&o.loop.n, 3000), "n", "timed lookups per transport per round, shared by the --concurrency workers (with the defaults, 9 instances of 1 round: 27,000; when not given, at least 10 per worker, and at a --rate, 5 seconds of it); "+countWords)
	f.Var(newCount(&o.loop.warmup, 1000), "warmup", "untimed lookups before timing, on the same connection; "+countWords)
	f.IntVar(&o.instances, "instances", 9, "server instances per case: dbsock restarts each server it started between instances (same data); "+
		"a server you run gets fresh connections instead; the 95% interval is computed over instances (6 or more are needed: 2 to 5 give medians only, which the run says before it starts); "+
		"not given, more when the run makes more comparisons than 9 instances can carry through Holm's adjustment (13 to 25 need 10); with --precision, 1 unless given")
	f.IntVar(&o.loop.rounds, "rounds", 1, "rounds per server instance, each with fresh connections and a fresh warm-up")
	f.StringSliceVar(&o.paths, "paths", []string{"tcp", "unix"}, pathsHelp())
	f.IntVar(&o.loop.blocks, "blocks", scenarios.DefaultBlocks, "block pairs per round: a round's lookups run as this many TCP blocks and as many Unix blocks, interleaved")
	f.Uint64Var(&o.loop.seed, "seed", 0, "seed of the block order (0: a new one, printed in the report; give it to repeat a run's order)")
	f.StringVar(&o.loop.precisionSpec, "precision", "", "keep adding rounds until the p50 speedup's 95% interval is within this half-width, e.g. 3%")
	f.DurationVar(&o.loop.maxDuration, "max-duration", 10*time.Minute, "with --precision: stop adding rounds to a case after this long")
	f.StringVar(&o.place.mode, "placement", "auto", "CPU placement: auto (at rest on 2+ CPUs, each case placed shared and split in turn, a verdict for each; at a rate, the client off the servers' CPU; the report says which), "+
		"none (scheduler decides), same or shared (client and servers on CPU 0), split (client CPU 0, servers CPU 1); "+
		"a list (shared,split) measures each case under each, taking turns on every server instance, with a verdict per placement and a word where they disagree")
	f.StringVar(&o.place.clientCPU, "client-cpu", "", "pin the client to this CPU list (e.g. 0 or 0-1); overrides --placement")
	f.StringVar(&o.place.serverCPU, "server-cpu", "", "pin servers dbsock starts to this CPU list; overrides --placement")
	f.StringArrayVar(&o.servers.images, "image", nil, "docker provider: use this image for a target, TARGET=REF (repeatable), e.g. mysql=dbsock/mariadb:10.11")
	f.StringArrayVar(&o.servers.pids, "server-pid", nil, "external provider: the server's pid, TARGET=PID (repeatable), whose process tree's CPU time dbsock reads; without it dbsock looks for the TCP listener in /proc")
	f.BoolVar(&o.explain, "explain", false, "also run the floor and echo targets, and show where each target's microseconds go: kernel floor, client (Go's runtime, or with --clients each stack's own), server work")
	f.BoolVar(&o.servers.keep, "keep", false, "compose provider: leave the servers running afterwards (docker compose -p PROJECT down removes them)")
	f.StringVar(&o.servers.provider, "provider", "auto", "where servers come from: "+strings.Join(providers, ", "))
	f.StringVar(&o.client.place, "client", "host", "where the client runs: host (on this host: Go's client, like every stack's agent, in a fresh process for each server instance, so that the interval covers the client process as it covers the server), "+
		"inprocess (Go's client in dbsock's own process, one for the whole run), "+
		"or container (in a container on the same Docker engine, sharing the servers' socket directories and the host network, as an application beside its database)")
	f.StringVar(&o.client.binary, "client-binary", "", "with --client container: a static Linux build of dbsock for the engine to run there (default: this executable)")
	o.workload.bind(f)
	o.output.bind(f)
	o.sweep.bind(f)
	o.flags = f
	f.DurationVar(&o.loop.opTimeout, "op-timeout", scenarios.DefaultOpTimeout, "give up on a connection whose server has not answered for this long")
	f.BoolVar(&o.failFast, "fail-fast", false, "stop at the first target that fails instead of going on with the others")
	o.client.stacks = []string{"go"}
	f.Var(&clientsValue{stacks: &o.client.stacks}, "clients", "the client stacks to measure each target from, separated by commas: go (dbsock's own Go drivers), "+agentStacksHelp()+" (an agent with that language's client library, installed at its first use, its connections verified on the server side), with :LIBRARY where a stack has several and :MODEL for another of its worker models at load (c:eventloop), "+
		"or cmd:'COMMAND' for your own agent, which takes the rest of the value, commas and all (docs/agents.md: dbsock runs COMMAND with the target's name as its last argument; reports and thresholds name it cmd); repeatable; a stack without a library for a target is skipped and the report says why")
	f.StringVar(&o.via, "via", "", viaHelp())
	f.StringVar(&o.baseline, "baseline", "tcp", "the path every other one is compared with, one of --paths: tcp (TCP on 127.0.0.1), or e.g. tls to ask what each path gains over a client's TLS connection")
	f.StringArrayVar(&o.thresholds, "threshold", nil, "fail (exit 3) unless this holds after the run, e.g. 'redis.unix.p99<2ms', 'mysql.unix_speedup_p50>=1.0' or, with --paths tcp,tcp6,unix, 'redis.tcp6_speedup_p50.lo>=0.95'; with --clients, 'redis@python.unix_speedup_p50>=1.1' (or redis@cmd for a cmd: agent) checks one client stack's case; repeatable")
	f.BoolVarP(&o.quiet, "quiet", "q", false, "print no progress lines on stderr")
	f.StringVar(&o.host, "host", "", "this machine's label in the report, the column that dbsock report of several files gives it (default: the hostname; give one to keep the hostname out of a file you publish)")
	o.settings = bindSettings(f)
}

// agentStacksHelp lists the stacks whose agents dbsock carries (each
// agents/NAME/stack.json), and how one of them chooses a library.
func agentStacksHelp() string {
	stacks, err := agents.Stacks("")
	if err != nil || len(stacks) == 0 {
		return "the stacks of $" + agents.DirEnv
	}
	return strings.Join(stacks, ", ")
}
