package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/dbsock/dbsock/compose"
	"github.com/dbsock/dbsock/drivers"
	pgdrv "github.com/dbsock/dbsock/drivers/postgres"
	"github.com/dbsock/dbsock/internal/placement"
	"github.com/dbsock/dbsock/internal/runner"
	"github.com/dbsock/dbsock/results"
	"github.com/dbsock/dbsock/scenarios"
)

// runOptions are the flags of "dbsock run".
type runOptions struct {
	n, warmup, rounds int
	provider          string
	output            outputOptions
	thresholds        []string
	opTimeout         time.Duration
	failFast          bool
	sweep             sweepOptions
	flags             *pflag.FlagSet
	quiet             bool
	images            []string
	keep              bool
	placement         string
	clientCPU         string
	serverCPU         string

	mysqlAddr, mysqlSocket, mysqlUser, mysqlPassword, mysqlDB string
	redisAddr, redisSocket, redisPassword                     string
	mongoAddr, mongoSocket, mongoUser                         string
	pgAddr, pgSocketDir, pgUser, pgDB                         string
	passwordFiles                                             map[string]*string
}

// Providers accepted by --provider.
var providers = []string{"auto", "docker", "compose", "local", "external"}

func newRunCmd(stdout, stderr io.Writer) *cobra.Command {
	o := &runOptions{}
	cmd := &cobra.Command{
		Use:   "run TARGET... [flags]",
		Short: "Measure primary-key lookups over 127.0.0.1 TCP and over a Unix socket",
		Long: `Run measures each TARGET over 127.0.0.1 TCP and over its Unix domain socket:
one connection per transport and round, verified on the server side, warmed
up, then N lookups each timed on its own. Rounds alternate which transport
goes first.

Targets (dbsock targets lists them with what one op is):
  mysql     SELECT by primary key, statement prepared once (MySQL or MariaDB)
  redis     GET of one key
  mongo     findOne by _id (MongoDB, or FerretDB speaking its wire protocol)
  postgres  SELECT by primary key, statement prepared once (PostgreSQL)
  echo      4-byte ping-pong with dbsock's own echo server: the transport floor
  grpc      gRPC health Check on a kept HTTP/2 connection (dbsock's server)
  http      HTTP/1.1 GET with keep-alive (dbsock's server)
  all       mysql redis mongo

Providers:
  docker    start containers (testcontainers-go) with host networking, the
            server on 127.0.0.1 only and its socket dir bind-mounted; official
            images mysql:8.4, redis:7.4, mongo:7.0, postgres:16, or --image
            TARGET=REF (make images builds dbsock/mariadb, dbsock/redis,
            dbsock/ferretdb, dbsock/postgres, used when the official ones
            cannot be pulled)
  compose   the same from compose/compose.yaml with Docker Compose
  local     start private throwaway servers from binaries on PATH
            (mysqld or mariadbd, redis-server, mongod or ferretdb, postgres)
  external  measure servers you already run: give both --TARGET-addr and
            --TARGET-socket (--postgres-socket-dir for PostgreSQL)
  auto      external for targets whose endpoints are given, else docker when
            an engine answers and the image is here or can be pulled, else local

Passwords: --TARGET-password-file FILE, or DBSOCK_MYSQL_PASSWORD,
DBSOCK_REDIS_PASSWORD, DBSOCK_MONGO_PASSWORD, DBSOCK_POSTGRES_PASSWORD (the --*-password flags work too,
but show in your shell history and process list). Servers dbsock starts get a
random password per run; no password is ever printed.`,
		Example: `  dbsock run mysql --n 10000
  dbsock run all --format json --out results.json
  DBSOCK_MYSQL_PASSWORD=secret dbsock run mysql --provider external \
    --mysql-addr 127.0.0.1:3306 --mysql-socket /run/mysqld/mysqld.sock --mysql-user app --mysql-db app`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runRun(cmd.Context(), o, args, stdout, stderr)
		},
	}
	f := cmd.Flags()
	f.SortFlags = false
	f.IntVar(&o.n, "n", 10000, "timed lookups per transport per round")
	f.IntVar(&o.warmup, "warmup", 1000, "untimed lookups before timing, on the same connection")
	f.IntVar(&o.rounds, "rounds", 3, "rounds; the transport that goes first alternates")
	f.StringVar(&o.placement, "placement", "none", "CPU placement: none (scheduler decides), same (client and servers on CPU 0), split (client CPU 0, servers CPU 1)")
	f.StringVar(&o.clientCPU, "client-cpu", "", "pin the client to this CPU list (e.g. 0 or 0-1); overrides --placement")
	f.StringVar(&o.serverCPU, "server-cpu", "", "pin servers dbsock starts to this CPU list; overrides --placement")
	f.StringArrayVar(&o.images, "image", nil, "docker provider: use this image for a target, TARGET=REF (repeatable), e.g. mysql=dbsock/mariadb:10.11")
	f.BoolVar(&o.keep, "keep", false, "compose provider: leave the servers running afterwards (docker compose -p PROJECT down removes them)")
	f.StringVar(&o.provider, "provider", "auto", "where servers come from: "+strings.Join(providers, ", "))
	o.output.bind(f)
	o.sweep.bind(f)
	o.flags = f
	f.DurationVar(&o.opTimeout, "op-timeout", scenarios.DefaultOpTimeout, "give up on a connection whose server has not answered for this long")
	f.BoolVar(&o.failFast, "fail-fast", false, "stop at the first target that fails instead of going on with the others")
	f.StringArrayVar(&o.thresholds, "threshold", nil, "fail (exit 1) unless this holds after the run, e.g. 'redis.unix.p99<2ms' or 'mysql.unix_speedup_p50>=1.0'; repeatable")
	f.BoolVarP(&o.quiet, "quiet", "q", false, "print no progress lines on stderr")
	f.StringVar(&o.mysqlAddr, "mysql-addr", "", "external MySQL TCP address HOST:PORT")
	f.StringVar(&o.mysqlSocket, "mysql-socket", "", "external MySQL Unix socket path")
	f.StringVar(&o.mysqlUser, "mysql-user", "root", "external MySQL user")
	f.StringVar(&o.mysqlPassword, "mysql-password", "", "external MySQL password (prefer $DBSOCK_MYSQL_PASSWORD)")
	f.StringVar(&o.mysqlDB, "mysql-db", "dbsock", "external MySQL database; dbsock creates table `user` in it")
	f.StringVar(&o.redisAddr, "redis-addr", "", "external Redis TCP address HOST:PORT")
	f.StringVar(&o.redisSocket, "redis-socket", "", "external Redis Unix socket path")
	f.StringVar(&o.redisPassword, "redis-password", "", "external Redis password (prefer $DBSOCK_REDIS_PASSWORD)")
	f.StringVar(&o.mongoAddr, "mongo-addr", "", "external MongoDB TCP address HOST:PORT")
	f.StringVar(&o.mongoSocket, "mongo-socket", "", "external MongoDB Unix socket path (must end in .sock)")
	f.StringVar(&o.mongoUser, "mongo-user", "", "external MongoDB user (password from $DBSOCK_MONGO_PASSWORD)")
	f.StringVar(&o.pgAddr, "postgres-addr", "", "external PostgreSQL TCP address HOST:PORT")
	f.StringVar(&o.pgSocketDir, "postgres-socket-dir", "", "external PostgreSQL socket directory (the socket is DIR/.s.PGSQL.PORT, PORT from --postgres-addr)")
	f.StringVar(&o.pgUser, "postgres-user", "postgres", "external PostgreSQL user (password from $DBSOCK_POSTGRES_PASSWORD)")
	f.StringVar(&o.pgDB, "postgres-db", "postgres", "external PostgreSQL database; dbsock creates table \"user\" in it")
	o.passwordFiles = map[string]*string{}
	for _, t := range []string{"mysql", "redis", "mongo", "postgres"} {
		o.passwordFiles[t] = f.String(t+"-password-file", "", "read the external "+t+" password from this file (first line)")
	}
	return cmd
}

// parseTargets expands "all", rejects unknown names and drops repeats.
func parseTargets(args []string) ([]string, error) {
	if len(args) == 0 {
		return nil, usagef("no target given; use one or more of: %s, all (e.g. dbsock run mysql)", strings.Join(runner.Targets, ", "))
	}
	var out []string
	seen := map[string]bool{}
	add := func(t string) {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	for _, a := range args {
		if a == "all" {
			for _, t := range runner.All {
				add(t)
			}
			continue
		}
		if _, ok := runner.Driver(a, runner.DriverOptions{}, 0); !ok {
			return nil, usagef("unknown target %q; use one or more of: %s, all", a, strings.Join(runner.Targets, ", "))
		}
		add(a)
	}
	return out, nil
}

// externalEndpoints builds the external provider's endpoints from flags and
// the environment, validating every address given.
func (o *runOptions) externalEndpoints() (map[string]compose.Pair, error) {
	passwords := map[string]string{"mysql": o.mysqlPassword, "redis": o.redisPassword}
	for _, t := range []string{"mysql", "redis", "mongo", "postgres"} {
		if passwords[t] == "" {
			passwords[t] = os.Getenv("DBSOCK_" + strings.ToUpper(t) + "_PASSWORD")
		}
		if path := *o.passwordFiles[t]; path != "" {
			b, err := os.ReadFile(path)
			if err != nil {
				return nil, usagef("--%s-password-file: %v", t, err)
			}
			line, _, _ := strings.Cut(string(b), "\n")
			passwords[t] = strings.TrimRight(line, "\r")
		}
	}
	pairs := map[string]compose.Pair{
		"mysql":    pair(o.mysqlAddr, o.mysqlSocket, drivers.Endpoint{User: o.mysqlUser, Password: passwords["mysql"], Database: o.mysqlDB}),
		"redis":    pair(o.redisAddr, o.redisSocket, drivers.Endpoint{Password: passwords["redis"]}),
		"mongo":    pair(o.mongoAddr, o.mongoSocket, drivers.Endpoint{User: o.mongoUser, Password: passwords["mongo"]}),
		"postgres": pair(o.pgAddr, pgSocket(o.pgSocketDir, o.pgAddr), drivers.Endpoint{User: o.pgUser, Password: passwords["postgres"], Database: o.pgDB}),
	}
	for target, p := range pairs {
		if p.TCP.Address != "" {
			if err := p.TCP.Validate(); err != nil {
				return nil, usagef("--%s-addr: %v", target, err)
			}
		}
		if p.Unix.Address != "" {
			if err := p.Unix.Validate(); err != nil {
				return nil, usagef("%s: %v", compose.SocketFlag(target), err)
			}
		}
		if p.Given() && (p.TCP.Address == "" || p.Unix.Address == "") {
			return nil, usagef("%s: give both --%s-addr and %s: dbsock compares the two transports of one server", target, target, compose.SocketFlag(target))
		}
	}
	return pairs, nil
}

func pair(addr, socket string, creds drivers.Endpoint) compose.Pair {
	tcp, unix := creds, creds
	tcp.Transport, tcp.Address = drivers.TCP, addr
	unix.Transport, unix.Address = drivers.Unix, socket
	return compose.Pair{TCP: tcp, Unix: unix}
}

// validate checks every flag before anything is started.
func (o *runOptions) validate() error {
	if err := intRange("n", o.n, 1, 1_000_000_000); err != nil {
		return err
	}
	if err := intRange("warmup", o.warmup, 0, 1_000_000_000); err != nil {
		return err
	}
	if err := intRange("rounds", o.rounds, 1, 1000); err != nil {
		return err
	}
	if o.opTimeout < 10*time.Millisecond || o.opTimeout > time.Hour {
		return usagef("--op-timeout %s is out of range; accepted: 10ms to 1h", o.opTimeout)
	}
	if err := oneOf("provider", o.provider, providers...); err != nil {
		return err
	}
	return nil
}

func runRun(ctx context.Context, o *runOptions, args []string, stdout, stderr io.Writer) error {
	targets, err := parseTargets(args)
	if err != nil {
		return err
	}
	if err := o.validate(); err != nil {
		return err
	}
	outputs, err := o.output.resolve()
	if err != nil {
		return err
	}
	if err := o.sweep.validate(o.flags.Changed("n")); err != nil {
		return err
	}
	var gates []results.Threshold
	for _, expr := range o.thresholds {
		th, err := results.Parse(expr)
		if err != nil {
			return usagef("--threshold: %v", err)
		}
		gates = append(gates, th)
	}
	pairs, err := o.externalEndpoints()
	if err != nil {
		return err
	}
	place, err := placement.Resolve(o.placement, o.clientCPU, o.serverCPU)
	if err != nil {
		return usagef("%v", err)
	}
	if len(place.Client) > 0 && len(place.Server) == 0 {
		// Servers would inherit the client's pinning: start them on every
		// CPU the client could use before it was pinned.
		if place.Server, err = placement.Affinity(0); err != nil {
			return err
		}
	}
	local := compose.NewLocal()
	local.ServerCPUs = place.Server
	images, err := parseImages(o.images)
	if err != nil {
		return err
	}
	external := &compose.External{Endpoints: pairs}
	if o.provider == "external" {
		for _, t := range targets {
			if _, ok := pairs[t]; !ok {
				return usagef("target %s is dbsock's own server: it has no external endpoints; use --provider local or auto", t)
			}
			if !pairs[t].Given() {
				return usagef("--provider external needs --%s-addr and %s for target %s", t, compose.SocketFlag(t), t)
			}
		}
	}
	var provider compose.Provider
	switch o.provider {
	case "local":
		provider = local
	case "docker":
		provider = newDocker(images, place.Server)
	case "compose":
		c := compose.NewCompose()
		c.Images, c.Keep = images, o.keep
		provider = c
		if o.keep {
			defer func() {
				fmt.Fprintf(stderr, "dbsock: --keep: the servers still run; remove them with: docker compose -p %s down -v\n", c.Project())
			}()
		}
	case "external":
		provider = external
	default:
		provider = &compose.Auto{Providers: []compose.Provider{external, newDocker(images, place.Server), local}}
	}
	defer provider.Close()
	done := make(chan struct{})
	defer close(done)
	go secondSignal(ctx, done, provider, stderr)

	opts := scenarios.Options{N: o.n, Warmup: o.warmup, Rounds: o.rounds, OpTimeout: o.opTimeout,
		Duration: o.sweep.duration, Rate: o.sweep.rate}
	plan := runner.Plan{
		Targets:      targets,
		Provider:     provider,
		ProviderName: o.provider,
		Scenarios:    o.sweep.scenarios,
		Concurrency:  o.sweep.concurrency,
		ValueSizes:   o.sweep.sizes,
		Drivers:      o.sweep.drivers(),
		Placement:    place,
		FailFast:     o.failFast,
	}
	var log io.Writer = stderr
	var bar *progress
	switch {
	case o.quiet:
		log = io.Discard
	case isTerminal(stderr):
		total := int64(-1) // unknown with --duration: a spinner
		if o.sweep.duration == 0 {
			total = o.sweep.totalOps(len(targets), o.rounds, o.n)
		}
		bar = startProgress(stderr, total)
		log, opts.Progress = bar, &bar.done
	}
	plan.Options, plan.Log = opts, log
	rep, runErr := runner.Run(ctx, plan)
	if bar != nil {
		bar.finish()
	}
	rep.Thresholds = results.Evaluate(rep, gates)
	if err := writeOutputs(rep, outputs, o.output.plot, stdout); err != nil {
		return err
	}
	if runErr != nil {
		return fmt.Errorf("run failed: %w", runErr)
	}
	var violated []string
	for _, th := range rep.Thresholds {
		if !th.OK {
			violated = append(violated, fmt.Sprintf("threshold %s violated: %s", th.Expr, th.ActualText))
		}
	}
	if len(violated) > 0 {
		return errors.New(strings.Join(violated, "\n"))
	}
	return nil
}

// secondSignal waits, once a run is interrupted, for another Ctrl-C or
// SIGTERM: then dbsock removes what it can at once and exits (its server
// processes die with it: they are started with Pdeathsig).
func secondSignal(ctx context.Context, done <-chan struct{}, provider compose.Provider, stderr io.Writer) {
	select {
	case <-done:
		return
	case <-ctx.Done():
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sig)
	select {
	case <-done:
	case <-sig:
		fmt.Fprintln(stderr, "dbsock: interrupted again: removing what dbsock started and stopping now")
		_ = provider.Close()
		os.Exit(ExitFailed)
	}
}

// parseImages reads the --image TARGET=REF flags.
func parseImages(specs []string) (map[string]string, error) {
	images := map[string]string{}
	for _, s := range specs {
		target, ref, ok := strings.Cut(s, "=")
		if _, known := compose.DefaultImages[target]; !ok || !known || ref == "" {
			return nil, usagef("--image %q is not TARGET=REF with TARGET one of mysql, redis, mongo (e.g. mysql=dbsock/mariadb:10.11)", s)
		}
		images[target] = ref
	}
	return images, nil
}

func newDocker(images map[string]string, cpus []int) *compose.Docker {
	d := compose.NewDocker()
	d.Images, d.ServerCPUs = images, cpus
	return d
}

// pgSocket turns --postgres-socket-dir into the socket file PostgreSQL
// makes for the port of --postgres-addr (5432 when none is given).
func pgSocket(dir, addr string) string {
	if dir == "" {
		return ""
	}
	port := 5432
	if i := strings.LastIndexByte(addr, ':'); i >= 0 {
		if p, err := strconv.Atoi(addr[i+1:]); err == nil {
			port = p
		}
	}
	return pgdrv.SocketFile(dir, port)
}
