package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dbsock/dbsock/internal/setting"
	"github.com/dbsock/dbsock/supply/child"
	"github.com/dbsock/dbsock/supply/containers"
)

func TestMain(m *testing.M) {
	child.MaybeRun()
	// dbsock run starts Go's client as this executable's agent command
	// (--client host: os.Executable, here this test binary), which runs
	// as dbsock agent does.
	if len(os.Args) > 1 && os.Args[1] == "agent" {
		os.Exit(Main(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
	}
	containers.Quiet() // as main does: the in-process runs are dbsock's own
	code := m.Run()
	if staticBin != "" && staticErr == nil {
		os.RemoveAll(filepath.Dir(staticBin))
	}
	os.Exit(code)
}

// dbsock runs the command line in-process and returns exit status, stdout
// and stderr. A run at rest that names no placement is measured placed
// shared (onePlacement); dbsockAsGiven runs the command line as given.
func dbsock(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return dbsockAsGiven(t, onePlacement(args)...)
}

// dbsockAsGiven is dbsock without onePlacement: auto's placements where
// the command line names none.
func dbsockAsGiven(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

// onePlacement is a run's command line with --placement shared where it
// names no placement and runs at rest: auto there measures every case
// placed shared and split (placement.ChooseBoth), which doubles the cases
// a test counts and the time it takes. The tests of auto's two placements
// (TestDefaultPlacesSharedAndSplit, pipeline's
// TestAutoPlacementsThatDisagreeAreSaid) run as given; a run at a rate
// keeps auto's one placement.
func onePlacement(args []string) []string {
	if len(args) == 0 || args[0] != "run" {
		return args
	}
	for _, a := range args {
		for _, f := range []string{"--placement", "--client-cpu", "--server-cpu", "--rate"} {
			if a == f || strings.HasPrefix(a, f+"=") {
				return args
			}
		}
	}
	return append([]string{"run", "--placement", "shared"}, args[1:]...)
}

func TestUsageErrors(t *testing.T) {
	long := "/tmp/" + strings.Repeat("s", 120) + ".sock"
	tests := []struct {
		name string
		args []string
		want string // in the one error line
	}{
		{"no target", []string{"run"}, "no target given"},
		{"unknown target", []string{"run", "oracle"}, `unknown target "oracle"`},
		{"unknown flag", []string{"run", "mysql", "--bogus"}, "unknown flag: --bogus"},
		{"unknown path", []string{"run", "redis", "--paths", "tcp,tlss,unix"}, `"tlss" is not a path; use tcp, unix, tcp6, tls, published, bridge, service, pod, tcp2, tcp-tcp or unix-tcp`},
		{"tls ca not PEM", []string{"run", "redis", "--provider", "external", "--redis-addr", "127.0.0.1:1", "--redis-socket", "/tmp/x.sock", "--redis-tls-ca", "/etc/hostname"}, "--redis-tls-ca: /etc/hostname holds no PEM certificate"},
		{"tls ca and insecure", []string{"run", "redis", "--provider", "external", "--redis-addr", "127.0.0.1:1", "--redis-socket", "/tmp/x.sock", "--redis-tls-insecure", "--redis-tls-ca", "/etc/hostname"}, "give one (a CA to verify the server with, or no verification)"},
		{"tls addr without trust", []string{"run", "redis", "--provider", "external", "--redis-addr", "127.0.0.1:1", "--redis-socket", "/tmp/x.sock", "--redis-tls-addr", "127.0.0.1:2"}, "say which CA to trust with --redis-tls-ca FILE"},
		{"unknown command", []string{"frobnicate"}, `unknown command "frobnicate"`},
		{"n zero", []string{"run", "echo", "--n", "0"}, "--n 0 is out of range; accepted: 1 to 1000000000"},
		{"n negative", []string{"run", "echo", "--n", "-5"}, "--n -5 is out of range"},
		{"n not a number", []string{"run", "echo", "--n", "lots"}, `--n "lots" is not a whole number such as 3000, 10k, 2M or 1e4`},
		{"n absurd", []string{"run", "echo", "--n", "99999999999"}, "--n 99999999999 is out of range"},
		{"warmup negative", []string{"run", "echo", "--warmup", "-1"}, "--warmup -1 is out of range"},
		{"rounds zero", []string{"run", "echo", "--rounds", "0"}, "--rounds 0 is out of range"},
		{"bad provider", []string{"run", "echo", "--provider", "cloud"}, `--provider "cloud" is not accepted; use one of: auto, docker, compose, local, external`},
		{"bad format", []string{"run", "echo", "--format", "yaml"}, `--format "yaml" is not accepted`},
		{"bad client", []string{"run", "echo", "--client", "vm"}, `--client "vm" is not accepted; use one of: host, inprocess, container`},
		// Paths the provider serves for no target: refused, not measured
		// without them.
		{"tls under compose", []string{"run", "redis", "--provider", "compose", "--paths", "tcp,tls,unix"},
			"--paths tcp,tls,unix with --provider compose: the tls path cannot be measured: compose.yaml gives its services no certificate"},
		{"published from local servers", []string{"run", "redis", "--provider", "local", "--paths", "tcp,published,unix"},
			"the published path cannot be measured: only the docker and compose providers serve it"},
		{"pod from a server you run", []string{"run", "redis", "--provider", "external", "--redis-addr", "127.0.0.1:1", "--redis-socket", "/tmp/x.sock", "--paths", "tcp,pod,unix"},
			"the pod path cannot be measured: only the docker and compose providers serve it"},
		{"tls of a server you run without its endpoint", []string{"run", "redis", "--provider", "external", "--redis-addr", "127.0.0.1:1", "--redis-socket", "/tmp/x.sock", "--paths", "tcp,tls,unix"},
			"the tls path cannot be measured: no tls endpoint was given: add --redis-tls-ca FILE (or --redis-tls-insecure)"},
		{"client binary without container", []string{"run", "echo", "--client-binary", "/bin/sh"}, "--client-binary is the dbsock that runs in the client container; give --client container too"},
		{"client binary missing", []string{"run", "echo", "--client", "container", "--client-binary", "/nonexistent/dbsock"}, "--client-binary /nonexistent/dbsock is not a Linux executable (stat /nonexistent/dbsock: no such file"},
		{"bad placement", []string{"run", "echo", "--placement", "diagonal"}, `--placement "diagonal" is not accepted`},
		{"bad cpu list", []string{"run", "echo", "--client-cpu", "a-b"}, "--client-cpu: CPU list"},
		{"missing out dir", []string{"run", "echo", "--out", "/nonexistent/dir/r.json"}, `directory "/nonexistent/dir" does not exist`},
		{"malformed addr", []string{"run", "redis", "--redis-addr", "localhost", "--redis-socket", "/tmp/r.sock"}, "--redis-addr: tcp address \"localhost\" is not HOST:PORT"},
		{"relative socket", []string{"run", "redis", "--redis-addr", "127.0.0.1:6379", "--redis-socket", "r.sock"}, "--redis-socket: unix socket path \"r.sock\" is not absolute"},
		{"socket too long", []string{"run", "redis", "--redis-addr", "127.0.0.1:6379", "--redis-socket", long}, "the OS limit is 107 (sun_path on linux): give the socket a shorter path, e.g. a directory under /tmp"},
		{"only addr", []string{"run", "redis", "--redis-addr", "127.0.0.1:6379"}, "give both --redis-addr and --redis-socket"},
		{"only socket", []string{"run", "mysql", "--mysql-socket", "/run/mysqld/mysqld.sock"}, "give both --mysql-addr and --mysql-socket"},
		{"external without endpoints", []string{"run", "mysql", "--provider", "external"}, "--provider external needs --mysql-addr and --mysql-socket"},
		{"external echo", []string{"run", "echo", "--provider", "external"}, "target echo is dbsock's own server"},
		{"version args", []string{"version", "extra"}, `unknown command "extra"`},
		{"out without format", []string{"run", "echo", "--out", "/tmp/r.txt"}, `cannot tell the format of "/tmp/r.txt"`},
		{"out twice", []string{"run", "echo", "--out", "/tmp/r.md", "--out", "/tmp/r.md"}, `names the same file as --out "/tmp/r.md"`},
		{"op mixed without a share", []string{"run", "mysql", "--op", "mixed:95"}, `--op "mixed:95" is not accepted; use read, update or mixed:R/W`},
		{"query for two targets", []string{"run", "mysql", "redis", "--query", "SELECT 1"}, "say which one it is for"},
		{"query for a target not run", []string{"run", "mysql", "--query", "redis=GET {key}"}, "is for target redis, which this run does not measure"},
		{"query without placeholder", []string{"run", "mysql", "--query", "SELECT 1"}, "has 0 ? placeholders"},
		{"query writes under read", []string{"run", "postgres", "--query", "UPDATE t SET n = 1 WHERE id = $1"}, "is not a SELECT; a write needs --op update"},
		{"query with mixed", []string{"run", "mysql", "--op", "mixed:9/1", "--query", "SELECT a FROM t WHERE id = ?"}, "--op mixed times dbsock's own read and update"},
		{"memcached query verb", []string{"run", "memcached", "--query", "set user:{key}"}, `give "get PATTERN"`},
		{"mongo filter not json", []string{"run", "mongo", "--query", "{_id: {key}"}, "is not a JSON filter"},
		{"mongo collection without query", []string{"run", "mongo", "--mongo-collection", "users"}, "--mongo-collection applies to your own op; give --query for mongo too"},
		{"keys-from missing file", []string{"run", "redis", "--keys-from", "/nonexistent/keys"}, `--keys-from "/nonexistent/keys" for redis: open /nonexistent/keys: no such file`},
		{"keys-from a device", []string{"run", "redis", "--keys-from", "/dev/zero"}, `--keys-from "/dev/zero" for redis is not a regular file (Dc---------)`},
		{"keys-from too many", []string{"run", "redis", "--keys-from", "query:x", "--rows", "6000000"}, "--keys-from reads at most 5000000 of your keys"},
		{"keys-from and dbsock's write", []string{"run", "redis", "--keys-from", "/etc/hostname", "--op", "update"}, "name your write with --query"},
		{"query on dbsock's own server", []string{"run", "echo", "--query", "x"}, "this run measures no database target"},
		{"threshold on a path not measured", []string{"run", "echo", "--threshold", "echo.tcp6.p50<1ms"}, "names path tcp6, which this run does not measure (its --paths are tcp,unix)"},
		{"paths without unix", []string{"run", "echo", "--paths", "tcp,tcp6"}, "--paths tcp,tcp6: every run measures tcp (the path each other one is compared with) and unix"},
		{"paths unknown", []string{"run", "echo", "--paths", "tcp,unix,udp"}, `--paths: "udp" is not a path; use tcp, unix, tcp6, tls, published, bridge, service, pod, tcp2, tcp-tcp or unix-tcp`},
		{"paths twice", []string{"run", "echo", "--paths", "tcp,unix,tcp"}, "--paths names tcp twice"},
		{"baseline not measured", []string{"run", "echo", "--baseline", "tls"}, "--baseline tls: the baseline must be one of the paths measured (--paths tcp,unix)"},
		{"baseline unknown", []string{"run", "echo", "--paths", "tcp,tls,unix", "--baseline", "udp"}, "--baseline udp: the baseline must be one of the paths measured (--paths tcp,tls,unix)"},
		{"threshold on the baseline", []string{"run", "echo", "--paths", "tcp,tcp6,unix", "--baseline", "tcp6", "--threshold", "echo.tcp6.speedup_p50>=1"},
			"--threshold \"echo.tcp6.speedup_p50>=1\" asks for tcp6's speedup over the baseline, which is tcp6 itself; name another path, or another --baseline"},
		{"bad threshold", []string{"run", "echo", "--threshold", "echo.unix.p50"}, "--threshold: threshold \"echo.unix.p50\" has no comparison"},
		{"bad plot ext", []string{"run", "echo", "--plot", "/tmp/r.gif"}, "--plot: plot file \"/tmp/r.gif\" must end in .svg or .png"},
		{"op timeout tiny", []string{"run", "echo", "--op-timeout", "1ns"}, "--op-timeout 1ns is out of range; accepted: 10ms to 1h"},
		{"missing password file", []string{"run", "redis", "--redis-addr", "127.0.0.1:6379", "--redis-socket", "/tmp/r.sock", "--redis-password-file", "/nonexistent/pw"}, "--redis-password-file: open /nonexistent/pw"},
		{"bad scenario", []string{"run", "echo", "--scenario", "pk,storm"}, `--scenario "storm" is not accepted; use one of: pk, connect`},
		{"concurrency zero", []string{"run", "echo", "--concurrency", "1,0"}, "--concurrency 0 is out of range; accepted: 1 to 4096"},
		{"value size words", []string{"run", "echo", "--value-size", "lots"}, `--value-size "lots" is not a size`},
		{"value size huge", []string{"run", "echo", "--value-size", "1GiB"}, `--value-size 1.0 GiB is out of range; accepted: 1 B to 16 MiB`},
		{"value size zero", []string{"run", "echo", "--value-size", "0"}, `--value-size 0 B is out of range`},
		{"duration and n", []string{"run", "echo", "--duration", "1s", "--n", "5"}, "give --n or --duration, not both"},
		{"duration tiny", []string{"run", "echo", "--duration", "1us"}, "--duration 1µs is out of range"},
		{"rate negative", []string{"run", "echo", "--rate", "-5"}, "--rate -5 is out of range"},
		{"rate with connect", []string{"run", "echo", "--rate", "100", "--scenario", "connect"}, "--rate runs the pk scenario open loop"},
		{"mysql mode", []string{"run", "echo", "--mysql-mode", "fast"}, `--mysql-mode "fast" is not accepted; use one of: prepared, interpolate, default`},
		{"redis protocol", []string{"run", "echo", "--redis-protocol", "4"}, "--redis-protocol 4 is not accepted; use 2 or 3"},
		{"mongo op", []string{"run", "echo", "--mongo-op", "drop"}, `--mongo-op "drop" is not accepted; use one of: find, ping`},
		{"report no file", []string{"report"}, "dbsock report takes RESULTS.json"},
		{"report by nothing known", []string{"report", "a.json", "b.json", "--by", "colour"}, `--by "colour" is not a field files are grouped by; give scenario, keys, value-size or rate`},
		{"report an empty directory", []string{"report", "/proc/self/fdinfo/", "/dev/null"}, "holds no .json file"},
		{"report a file twice", []string{"report", "/dev/null", "/dev/../dev/null"}, "/dev/null and /dev/../dev/null are the same file; give each host's file once"},
		{"report a file not there", []string{"report", "/dev/null", "/nonexistent/b.json"}, "read results /nonexistent/b.json: stat /nonexistent/b.json: no such file or directory; give the files"},
		{"host empty", []string{"run", "echo", "--host", ""}, `--host "" is empty; give a short name for this machine`},
		{"host with a line break", []string{"run", "echo", "--host", "a\nb"}, `holds a control character`},
		{"value size grpc", []string{"run", "echo", "grpc", "--value-size", "1KiB"}, "--value-size does not apply to target grpc"},
		{"value size http", []string{"run", "http", "--value-size", "16"}, "--value-size does not apply to target http"},
		{"threshold other target", []string{"run", "echo", "--threshold", "redis.unix.p50<1ms"}, "names target redis, which this run does not measure"},
		{"own target in docker", []string{"run", "echo", "--provider", "docker"}, "target echo is dbsock's own server"},
		{"own target in compose", []string{"run", "grpc", "--provider", "compose"}, "target grpc is dbsock's own server"},
		{"duration zero", []string{"run", "echo", "--duration", "0s"}, "--duration 0s is out of range"},
		{"rate zero", []string{"run", "echo", "--rate", "0"}, "--rate 0 is out of range"},
		{"endpoint with local", []string{"run", "redis", "--provider", "local", "--redis-addr", "127.0.0.1:6379", "--redis-socket", "/tmp/r.sock"}, "apply to --provider external or auto, not local"},
		{"socket is a directory", []string{"run", "redis", "--redis-addr", "127.0.0.1:6379", "--redis-socket", "/tmp"}, "/tmp is a directory, not a socket"},
		{"socket is a device", []string{"run", "redis", "--redis-addr", "127.0.0.1:6379", "--redis-socket", "/dev/null"}, "/dev/null is a character device, not a Unix socket"},
		{"hgrm to stdout", []string{"run", "echo", "--format", "hgrm"}, "--format hgrm writes one file per target and transport"},
		{"hgrm into a file", []string{"run", "echo", "--out", "/dev/null:hgrm"}, `--out "/dev/null" is not a directory`},
		{"server pid words", []string{"run", "redis", "--server-pid", "redis=me"}, "is not TARGET=PID"},
		{"server pid own target", []string{"run", "echo", "--server-pid", "echo=1"}, "is not TARGET=PID"},
		{"server pid gone", []string{"run", "redis", "--server-pid", "redis=999999999"}, "no process 999999999 is running"},
		{"server pid init", []string{"run", "redis", "--provider", "external", "--redis-addr", "127.0.0.1:1", "--redis-socket", "/tmp/r.sock", "--server-pid", "redis=1"}, "names the first process of this machine"},
		{"values in flight", []string{"run", "redis", "--pipeline", "10000", "--value-size", "16MiB"}, "469 GiB of values in flight at --pipeline 10000 and --value-size 16 MiB), more than the 640 MiB it allows itself; even one worker does not fit"},
		{"workers in flight", []string{"run", "echo", "--concurrency", "4096", "--value-size", "16MiB"}, "more than the 640 MiB it allows itself"},
		{"empty password file", []string{"run", "redis", "--redis-addr", "127.0.0.1:6379", "--redis-socket", "/tmp/r.sock", "--redis-password-file", "/dev/null"}, "--redis-password-file /dev/null: its first line is empty"},
		{"more blocks than ops", []string{"run", "echo", "--n", "10", "--blocks", "1000"}, "--blocks 1000 is more than --n 10"},
		{"keys without a query", []string{"run", "redis", "--keys-from", "/etc/hostname"}, "--keys-from for redis gives your keys to your own op: give --query too"},
		{"redis command with quotes", []string{"run", "redis", "--query", `EVAL_RO "return 1" 0 {key}`}, "has quotes: dbsock splits the command at spaces"},
		{"query for echo", []string{"run", "echo", "--query", "SELECT 1"}, "this run measures no database target (echo: dbsock's own servers take no --query)"},
		{"workers' histograms", []string{"run", "echo", "--concurrency", "4096"}, "--concurrency 4096 would hold about 2.7 GiB in dbsock (688 KiB per worker in latency histograms and connections"},
		{"redis workers", []string{"run", "redis", "--concurrency", "1000"}, "lower --concurrency to at most 952"},
		{"connect workers", []string{"run", "redis", "--concurrency", "600", "--scenario", "connect"}, "lower --concurrency to at most 176"},
		{"seeded values", []string{"run", "redis", "--rows", "100000", "--value-size", "1MiB"}, "--rows 100000 x --value-size 1.0 MiB seeds about 98 GiB into each server, more than half of the"},
		{"doctor timeout zero", []string{"doctor", "--timeout", "0"}, "--timeout 0s is out of range; accepted: 1ms to 1h"},
		{"doctor timeout negative", []string{"doctor", "--timeout", "-1s"}, "--timeout -1s is out of range"},
		{"doctor timeout tiny", []string{"doctor", "--timeout", "1ns"}, "--timeout 1ns is out of range"},
		{"explain with pipeline", []string{"run", "redis", "--explain", "--pipeline", "16"}, "--explain splits one lookup of each target's own value into its layers; it does not combine with --pipeline or --value-size"},
		{"explain with value size", []string{"run", "redis", "--explain", "--value-size", "1KiB"}, "does not combine with --pipeline or --value-size"},
		{"server pid for a target not run", []string{"run", "redis", "--server-pid", "mysql=1"}, "is for target mysql, which this run does not measure (it runs redis)"},
		{"server pid with local", []string{"run", "redis", "--provider", "local", "--server-pid", "redis=1"}, "applies to --provider external or auto"},
		{"pipeline on mysql", []string{"run", "mysql", "--pipeline", "1,16"}, "--pipeline applies to redis, postgres and pgbouncer"},
		{"op unknown", []string{"run", "mysql", "--op", "delete"}, `--op "delete" is not accepted; use read, update or mixed:R/W`},
		{"error rate words", []string{"run", "echo", "--max-error-rate", "some"}, `--max-error-rate "some" is not a share from 0% to 100%`},
		{"error rate over 100", []string{"run", "echo", "--max-error-rate", "150%"}, `--max-error-rate "150%" is not a share`},
		{"rows zero", []string{"run", "mysql", "--rows", "0"}, "--rows 0 is out of range"},
		{"rows huge", []string{"run", "mysql", "--rows", "1000000000"}, "--rows 1000000000 is out of range"},
		{"keys unknown", []string{"run", "mysql", "--keys", "gauss"}, `--keys "gauss" is not a key distribution`},
		{"zipf theta", []string{"run", "mysql", "--keys", "zipf:2"}, "has a zipf constant outside (0, 1)"},
		{"rows on own target", []string{"run", "echo", "--rows", "5"}, "echo read no rows"},
		{"update pipelined", []string{"run", "redis", "--op", "update", "--pipeline", "16"}, "--op update times one op per round trip; leave out --pipeline"},
		{"pipeline zero", []string{"run", "redis", "--pipeline", "0"}, "--pipeline 0 is out of range"},
		{"image with local", []string{"run", "mysql", "--provider", "local", "--image", "mysql=mysql:8.4"}, "does not apply to --provider local"},
		{"image malformed", []string{"run", "mysql", "--image", "mysql=Not A Ref"}, "is not an image reference"},
		{"private address", []string{"run", "redis", "--redis-addr", "10.0.0.1:6379", "--redis-socket", "/tmp/r.sock"}, "is not a loopback address"},
		{"host name", []string{"run", "redis", "--redis-addr", "example.com:6379", "--redis-socket", "/tmp/r.sock"}, "never looks up a name"},
		{"any address", []string{"run", "mysql", "--mysql-addr", "0.0.0.0:3306", "--mysql-socket", "/tmp/m.sock"}, "is not a loopback address"},
		{"ipv6 public", []string{"run", "mongo", "--mongo-addr", "[2001:db8::1]:27017", "--mongo-socket", "/tmp/mongodb-27017.sock"}, "is not a loopback address"},
		{"port zero", []string{"run", "redis", "--redis-addr", "127.0.0.1:0", "--redis-socket", "/tmp/r.sock"}, "is not a number from 1 to 65535"},
		{"port too big", []string{"run", "postgres", "--postgres-addr", "127.0.0.1:70000", "--postgres-socket-dir", "/tmp"}, "is not a number from 1 to 65535"},
		{"rate NaN", []string{"run", "echo", "--rate", "NaN"}, `--rate "NaN" is not a rate`},
		{"rate tiny", []string{"run", "echo", "--rate", "1e-10"}, "between one worker's ops, more than 1h; raise --rate"},
		{"rate below duration", []string{"run", "echo", "--rate", "0.2", "--duration", "200ms"}, "longer than each of the 10 blocks of --duration 200ms"},
		{"rate infinite", []string{"run", "echo", "--rate", "+Inf"}, `--rate "+Inf" is not a rate`},
		{"precision NaN", []string{"run", "echo", "--precision", "NaN%"}, `--precision "NaN%" is not a share`},
		{"precision zero", []string{"run", "echo", "--precision", "0"}, `--precision "0" is not a share`},
		{"max duration alone", []string{"run", "echo", "--max-duration", "1m"}, "--max-duration bounds --precision"},
		{"blocks zero", []string{"run", "echo", "--blocks", "0"}, "--blocks 0 is out of range"},
		{"instances zero", []string{"run", "echo", "--instances", "0"}, "--instances 0 is out of range"},
		{"instances and precision", []string{"run", "echo", "--instances", "3", "--precision", "3%"}, "give one of them"},
		{"placement bogus", []string{"run", "echo", "--placement", "far"}, `--placement "far" is not accepted; use one of: auto, none, same, split`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errs := dbsock(t, tt.args...)
			if code != ExitUsage {
				t.Fatalf("exit status %d, want %d; stderr: %s", code, ExitUsage, errs)
			}
			if out != "" {
				t.Fatalf("stdout should be empty, got %q", out)
			}
			lines := strings.Split(strings.TrimRight(errs, "\n"), "\n")
			if len(lines) != 1 || !strings.HasPrefix(lines[0], "dbsock: ") || !strings.Contains(lines[0], tt.want) {
				t.Fatalf("stderr = %q, want one line starting \"dbsock: \" containing %q", errs, tt.want)
			}
		})
	}
}

func TestVersion(t *testing.T) {
	code, out, _ := dbsock(t, "version")
	if code != 0 || !strings.HasPrefix(out, "dbsock ") || !strings.Contains(out, "go1.") {
		t.Fatalf("version: %d %q", code, out)
	}
}

func TestHelpOnEveryCommand(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"run", "--help"}, {"version", "--help"}} {
		code, out, errs := dbsock(t, args...)
		if code != 0 || !strings.Contains(out, "Usage:") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, out, errs)
		}
	}
	_, out, _ := dbsock(t, "run", "--help")
	for _, line := range strings.Split(out, "\n") {
		// pflag takes a `quoted` word in a flag's help for its value's name.
		if f := strings.Fields(line); len(f) > 1 && strings.HasPrefix(f[0], "--") && (f[1] == "user" || strings.Contains(line, "`")) {
			t.Errorf("help line shows a stray value name: %q", line)
		}
	}
	for _, flag := range []string{"--n ", "--warmup", "--rounds", "--provider", "--format", "--out", "--placement", "--mysql-addr", "--mysql-socket", "--mysql-user", "--mysql-db", "--mysql-password", "--redis-addr", "--redis-socket", "--redis-password", "--mongo-addr", "--mongo-socket"} {
		if !strings.Contains(out, flag) {
			t.Errorf("run --help does not mention %s", flag)
		}
	}
}

func TestReplaceFileReplacesWhole(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.md")
	if err := os.WriteFile(path, []byte(strings.Repeat("old\n", 1000)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := replaceFile(path, []byte("new\n")); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	if string(b) != "new\n" {
		t.Fatalf("file holds %q", b)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Fatalf("temp files left: %v", entries)
	}
}

// TestUpdateNeedsAllowWritesOnYourServer: --op update against endpoints the
// user gives is refused without --allow-writes, before anything connects.
func TestUpdateNeedsAllowWritesOnYourServer(t *testing.T) {
	sock := filepath.Join(shortTempDir(t), "r.sock")
	l, err := netListenUnix(sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	args := []string{"run", "redis", "--op", "update", "--redis-addr", "127.0.0.1:6379", "--redis-socket", sock}
	code, _, stderr := dbsock(t, args...)
	if code != ExitUsage || !strings.Contains(stderr, "add --allow-writes") {
		t.Fatalf("exit %d, stderr %q; want 2 and --allow-writes named", code, stderr)
	}
}

func TestEverySettingHasAFlag(t *testing.T) {
	for _, f := range setting.All {
		flag := flagName(f)
		if flag == "" {
			t.Errorf("setting %s has no flag of dbsock run to word it", f)
			continue
		}
		if name := strings.TrimPrefix(flag, "--"); newRunCmd(io.Discard, io.Discard).Flags().Lookup(name) == nil {
			t.Errorf("setting %s is worded as %s, which is not a flag of dbsock run", f, flag)
		}
	}
}
