// Command anchor checks, with the field's own generator, what dbsock
// says of PgBouncer's legs under load: pgbench -R through a PgBouncer in
// front of PostgreSQL (started by dbsock's own local recipe, pinned as
// dbsock pins its servers), over each of the four routes of two legs
// (the client's to PgBouncer over 127.0.0.1 TCP or its socket;
// PgBouncer's to PostgreSQL over PostgreSQL's socket, database postgres,
// or over 127.0.0.1 TCP, database postgres_over_tcp), at one offered rate
// over many connections; then the same with dbsock run pgbouncer. It is
// run by hand, alone on the machine, as scripts/peers.sh is:
//
//	go run ./targets/pgbouncer/anchor                  # 3000/s over 16 connections, shared CPU 0
//	go run ./targets/pgbouncer/anchor -server-cpu 1    # servers on CPU 1 (split)
//
// For each route it prints pgbench's p50 and p99 (from its per-transaction
// log, -l: each transaction's time from its scheduled start under -R, the
// schedule lag included, as dbsock's open-loop latencies count it) and the
// rate reached (its percentiles read from an HdrHistogram as dbsock reads
// its own), per round and as the median of rounds,
// and the ratios that answer which leg gains: each against both legs on
// TCP. pgbench's transactions are one SELECT of a row by its primary key
// from a table of 10,000 (extended protocol: PgBouncer 1.18 in
// transaction pooling keeps no prepared statement), its password in a
// PGPASSFILE of mode 0600 in the server's private directory.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/jackc/pgx/v5"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/results"
	"github.com/dbsock/dbsock/supply"
	"github.com/dbsock/dbsock/targets"
	_ "github.com/dbsock/dbsock/targets/all"
	"github.com/dbsock/dbsock/targets/pgbouncer"
	"github.com/dbsock/dbsock/targets/postgres"
)

type settings struct {
	rate, conns, rounds  int
	secs                 time.Duration
	clientCPU, serverCPU int
	dbsock               bool
	pgbench, tasksetBin  string
}

func main() {
	var s settings
	flag.IntVar(&s.rate, "rate", 3000, "offered rate, transactions per second (pgbench -R; dbsock --rate)")
	flag.IntVar(&s.conns, "conns", 16, "connections (pgbench -c; dbsock --concurrency)")
	flag.IntVar(&s.rounds, "rounds", 3, "rounds; each runs every route once, in an order that turns")
	flag.DurationVar(&s.secs, "duration", 10*time.Second, "how long pgbench runs a route in a round (-T)")
	flag.IntVar(&s.clientCPU, "cpu", 0, "the CPU pgbench (and dbsock's client) runs on")
	flag.IntVar(&s.serverCPU, "server-cpu", -1, "the CPU the servers run on (default: -cpu's, shared)")
	flag.BoolVar(&s.dbsock, "dbsock", true, "also run dbsock run pgbouncer at the same rate, connections and CPUs")
	flag.Parse()
	if s.serverCPU < 0 {
		s.serverCPU = s.clientCPU
	}
	if s.rate < 1 || s.conns < 1 || s.rounds < 1 || s.secs < time.Second || s.secs > 10*time.Minute {
		fmt.Fprintln(os.Stderr, "hopanchor: -rate, -conns and -rounds must be at least 1, -duration between 1s and 10m")
		os.Exit(2)
	}
	if err := run(s); err != nil {
		fmt.Fprintln(os.Stderr, "hopanchor:", err)
		os.Exit(1)
	}
}

// route is one of the four: the client's leg and the database whose leg
// PgBouncer takes.
type route struct {
	name     string // as dbsock's path
	client   drivers.Transport
	database string
}

var routes = []route{
	{"tcp-tcp", drivers.TCP, pgbouncer.OverTCP},
	{"unix-tcp", drivers.Unix, pgbouncer.OverTCP},
	{"tcp", drivers.TCP, pgbouncer.Database},
	{"unix", drivers.Unix, pgbouncer.Database},
}

func run(s settings) error {
	var err error
	if s.pgbench, err = exec.LookPath("pgbench"); err != nil {
		return errors.New("pgbench is not installed: apt-get install postgresql (scripts/install-deps.sh)")
	}
	if s.tasksetBin, err = exec.LookPath("taskset"); err != nil {
		return errors.New("taskset is not installed: apt-get install util-linux")
	}
	tg, ok := targets.Lookup("pgbouncer")
	if !ok {
		return errors.New("this dbsock has no pgbouncer target")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	l := supply.NewLocal()
	l.ServerCPUs = []int{s.serverCPU}
	defer l.Close()
	srv, err := l.Supply(ctx, tg.Supply())
	if err != nil {
		return err
	}
	defer srv.Stop(context.Background())
	work, err := os.MkdirTemp("", "dbsock-hopanchor-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	if err := prepare(ctx, srv.TCP(), work); err != nil {
		return err
	}
	fmt.Printf("pgbench through PgBouncer (%s), %d/s offered over %d connections, %s per route and round, client CPU %d, servers CPU %d\n\n",
		srv.Origin, s.rate, s.conns, s.secs, s.clientCPU, s.serverCPU)
	res := map[string][]result{}
	for round := range s.rounds {
		order := slices.Clone(routes)
		rotate(order, round)
		for _, r := range order {
			got, err := s.bench(ctx, srv, r, work)
			if err != nil {
				return err
			}
			res[r.name] = append(res[r.name], got)
			fmt.Printf("round %d %-8s reached %7.0f/s  p50 %8.1f µs  p99 %9.1f µs\n", round+1, r.name, got.tps, got.p50, got.p99)
		}
	}
	summarise(res)
	if s.dbsock {
		return s.runDbsock(ctx)
	}
	return nil
}

// rotate turns order by round places, so that no route is always first.
func rotate(order []route, round int) {
	k := round % len(order)
	tmp := append(slices.Clone(order[k:]), order[:k]...)
	copy(order, tmp)
}

// prepare makes pgbench's table through PgBouncer (10,000 rows, a 6-byte
// value as dbsock's) and its password file, mode 0600.
func prepare(ctx context.Context, ep drivers.Endpoint, work string) error {
	cfg, err := postgres.Config(ep)
	if err != nil {
		return err
	}
	cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	c, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return fmt.Errorf("connect through PgBouncer to make pgbench's table: %w", err)
	}
	defer c.Close(context.Background())
	for _, q := range []string{
		"DROP TABLE IF EXISTS hop_anchor",
		"CREATE TABLE hop_anchor (id int PRIMARY KEY, v text NOT NULL)",
		"INSERT INTO hop_anchor SELECT g, 'value!' FROM generate_series(1, 10000) g",
		"VACUUM ANALYZE hop_anchor",
	} {
		if _, err := c.Exec(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	pass := ""
	for _, db := range []string{pgbouncer.Database, pgbouncer.OverTCP} {
		pass += fmt.Sprintf("*:*:%s:%s:%s\n", db, ep.User, ep.Password)
	}
	if err := os.WriteFile(filepath.Join(work, "pgpass"), []byte(pass), 0o600); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(work, "select.sql"), []byte("\\set id random(1, 10000)\nSELECT v FROM hop_anchor WHERE id = :id;\n"), 0o600)
}

// result is one pgbench run's: the rate it reached and its latencies'
// p50 and p99, in µs.
type result struct{ tps, p50, p99 float64 }

// bench runs pgbench over r for s.secs and reads its per-transaction log.
func (s settings) bench(ctx context.Context, srv *supply.Server, r route, work string) (result, error) {
	host, tcp := "127.0.0.1", srv.TCP().Address
	port := tcp[strings.LastIndexByte(tcp, ':')+1:]
	if r.client == drivers.Unix {
		host = filepath.Dir(srv.Unix().Address)
	}
	logs := filepath.Join(work, "log-"+r.name)
	if err := os.MkdirAll(logs, 0o700); err != nil {
		return result{}, err
	}
	defer os.RemoveAll(logs)
	args := []string{"-c", strconv.Itoa(s.clientCPU), s.pgbench, "-n", "-M", "extended", "-f", filepath.Join(work, "select.sql"),
		"-h", host, "-p", port, "-U", srv.TCP().User, "-d", r.database,
		"-c", strconv.Itoa(s.conns), "-j", strconv.Itoa(min(s.conns, 2)), "-R", strconv.Itoa(s.rate),
		"-T", strconv.Itoa(int(s.secs.Seconds())), "-l", "--log-prefix", filepath.Join(logs, "pgbench")}
	cmd := exec.CommandContext(ctx, s.tasksetBin, args...)
	cmd.Env = append(os.Environ(), "PGPASSFILE="+filepath.Join(work, "pgpass"))
	if out, err := cmd.CombinedOutput(); err != nil {
		return result{}, fmt.Errorf("pgbench over %s: %v; it said:\n%s", r.name, err, out)
	}
	h, err := readLogs(logs)
	if err != nil || h.TotalCount() == 0 {
		return result{}, fmt.Errorf("pgbench over %s: its log: %v (%d transactions)", r.name, err, h.TotalCount())
	}
	us := func(q float64) float64 { return float64(h.ValueAtQuantile(q)) / 1e3 }
	return result{tps: float64(h.TotalCount()) / s.secs.Seconds(), p50: us(50), p99: us(99)}, nil
}

// readLogs records the latency (µs, the third field) of every transaction
// line of pgbench's logs in dir, at most 50,000,000 of them, in a histogram
// of dbsock's (ns).
func readLogs(dir string) (*hdrhistogram.Histogram, error) {
	h := results.NewHistogram()
	files, err := filepath.Glob(filepath.Join(dir, "pgbench*"))
	if err != nil {
		return h, err
	}
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			return h, err
		}
		sc := bufio.NewScanner(io.LimitReader(fh, 4<<30))
		for sc.Scan() && h.TotalCount() < 50_000_000 {
			fields := strings.Fields(sc.Text())
			if len(fields) < 3 {
				continue
			}
			if v, err := strconv.ParseFloat(fields[2], 64); err == nil {
				_ = h.RecordValue(int64(v * 1e3)) // beyond the histogram's range: left out
			}
		}
		fh.Close()
		if err := sc.Err(); err != nil {
			return h, err
		}
	}
	return h, nil
}

// summarise prints each route's medians over rounds, and the ratios of
// both legs on TCP over each other route (above 1: the route is faster).
func summarise(res map[string][]result) {
	med := func(name string, f func(result) float64) float64 {
		var xs []float64
		for _, r := range res[name] {
			xs = append(xs, f(r))
		}
		return results.Median(xs)
	}
	p50 := func(r result) float64 { return r.p50 }
	p99 := func(r result) float64 { return r.p99 }
	fmt.Println("\nmedian of rounds, and against both legs on TCP (tcp-tcp's over the route's; above 1, the route is faster):")
	words := map[string]string{"unix-tcp": "the client's leg moved", "tcp": "the hop's leg moved", "unix": "both legs moved"}
	for _, r := range routes {
		line := fmt.Sprintf("%-8s p50 %8.1f µs  p99 %9.1f µs", r.name, med(r.name, p50), med(r.name, p99))
		if w, ok := words[r.name]; ok {
			line += fmt.Sprintf("   p50 %.2f×  p99 %.2f×  (%s)", med("tcp-tcp", p50)/med(r.name, p50), med("tcp-tcp", p99)/med(r.name, p99), w)
		}
		fmt.Println(line)
	}
}

// runDbsock runs dbsock run pgbouncer over the four routes at the same
// rate, connections and CPUs, and prints its headline and legs.
func (s settings) runDbsock(ctx context.Context) error {
	fmt.Printf("\ndbsock run pgbouncer --provider local --paths tcp,unix,tcp-tcp,unix-tcp --baseline tcp-tcp --concurrency %d --rate %d --client-cpu %d --server-cpu %d\n\n",
		s.conns, s.rate, s.clientCPU, s.serverCPU)
	cmd := exec.CommandContext(ctx, "go", "run", "./cmd/dbsock", "run", "pgbouncer", "--provider", "local", "--paths", "tcp,unix,tcp-tcp,unix-tcp",
		"--baseline", "tcp-tcp", "--concurrency", strconv.Itoa(s.conns), "--rate", strconv.Itoa(s.rate),
		"--client-cpu", strconv.Itoa(s.clientCPU), "--server-cpu", strconv.Itoa(s.serverCPU), "--detail", "summary")
	cmd.Stdout, cmd.Stderr = os.Stdout, io.Discard
	return cmd.Run()
}
