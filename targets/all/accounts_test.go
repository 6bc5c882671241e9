package all_test

import (
	"bufio"
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	gomongo "go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/internal/testutil"
	"github.com/dbsock/dbsock/supply"
	"github.com/dbsock/dbsock/targets/mongo"
	"github.com/dbsock/dbsock/targets/targettest"
)

// TestNoAccountWithoutTheRunsPassword: the MariaDB (or MySQL) server
// dbsock starts lets no one in without the run's password: as an
// unprivileged OS user (nobody) over TCP, over ::1 and through the socket,
// root, anonymous and dbsock's own account without the password are all
// refused; as root (dbsock's own OS user) over the socket too. The server
// itself runs as the mysql user, not as root.
func TestNoAccountWithoutTheRunsPassword(t *testing.T) {
	testutil.NeedAny(t, "mariadb")
	srv := sharedLocal(t, "mysql")
	host, port, _ := strings.Cut(srv.TCP().Address, ":")
	client, err := exec.LookPath("mariadb")
	if err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		if uid := uidOf(t, srv.PID); uid == 0 {
			t.Errorf("the server (pid %d) runs as root", srv.PID)
		}
	}
	ways := map[string][]string{
		"tcp":    {"--protocol=tcp", "-h", host, "-P", port},
		"tcp6":   {"--protocol=tcp", "-h", "::1", "-P", port},
		"socket": {"--protocol=socket", "--socket=" + srv.Unix().Address},
	}
	for way, args := range ways {
		for _, account := range [][]string{{"-uroot"}, {"-u", ""}, {"-umysql"}, {"-udbsock"}, {"-udbsock", "-pnot-the-password"}, {"-uroot", "-proot"}} {
			for _, asNobody := range []bool{true, false} {
				if !asNobody && way != "socket" {
					continue
				}
				cmd := exec.Command(client, append(append([]string{"--no-defaults", "--connect-timeout=5"}, args...), append(account, "-e", "SELECT CURRENT_USER()")...)...)
				if asNobody && os.Geteuid() == 0 {
					cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
				}
				out, err := cmd.CombinedOutput()
				if err == nil {
					t.Errorf("%s as %v (OS user nobody: %v) logged in: %s", way, account, asNobody, out)
				}
			}
		}
	}
	// The run's own account with its password works over both.
	for _, args := range [][]string{ways["tcp"], ways["socket"]} {
		cmd := exec.Command(client, append(append([]string{"--no-defaults"}, args...), "-udbsock", "-e", "SELECT 1")...)
		cmd.Env = append(os.Environ(), "MYSQL_PWD="+srv.TCP().Password)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("dbsock with the run's password over %v: %v %s", args, err, out)
		}
	}
}

// uidOf is the real uid of process pid.
func uidOf(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[0] == "Uid:" {
			uid, _ := strconv.Atoi(f[1])
			return uid
		}
	}
	t.Fatalf("no Uid line for pid %d", pid)
	return -1
}

// TestMemcachedWantsTheRunsAccount: the memcached instances dbsock starts
// answer nothing before the text protocol's authentication with the run's
// account: over TCP (any local user can reach it) a get is refused, and a
// wrong password is refused.
func TestMemcachedWantsTheRunsAccount(t *testing.T) {
	srv := sharedLocal(t, "memcached")
	for _, first := range []string{"get dbsock:user:1\r\n", "set auth 0 0 12\r\ndbsock wrong\r\n"} {
		c, err := net.DialTimeout("tcp", srv.TCP().Address, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := c.Write([]byte(first)); err != nil {
			t.Fatal(err)
		}
		line, _ := bufio.NewReader(c).ReadString('\n')
		c.Close()
		if !strings.Contains(line, "ERROR") {
			t.Errorf("%q without the run's account: the server answered %q", strings.TrimSpace(first), line)
		}
	}
}

// TestFerretDBWantsTheRunsAccount: the FerretDB dbsock starts, as a local
// process and in a container (docker and compose providers), refuses
// commands from a client without the run's account (SCRAM), and a wrong
// password, over TCP and the socket; the run's account is answered.
func TestFerretDBWantsTheRunsAccount(t *testing.T) {
	for _, provider := range []string{"local", "docker", "compose"} {
		t.Run(provider, func(t *testing.T) {
			if provider == "local" {
				testutil.NeedAny(t, "ferretdb")
			}
			mongoRefuses(t, sharedSupplied(t, "mongo", provider).srv)
		})
	}
}

func mongoRefuses(t *testing.T, srv *supply.Server) {
	if srv.TCP().Password == "" {
		t.Fatal("the server has no password")
	}
	for _, ep := range []drivers.Endpoint{srv.TCP(), srv.Unix()} {
		if err := mongoFind(ep); err != nil && !errors.Is(err, gomongo.ErrNoDocuments) {
			t.Errorf("%s with the run's account: %v", ep.Transport, err)
		}
		for _, cred := range [][2]string{{"", ""}, {mongo.User, "wrong"}} {
			ep.User, ep.Password = cred[0], cred[1]
			err := mongoFind(ep)
			if err == nil || errors.Is(err, gomongo.ErrNoDocuments) {
				t.Errorf("%s as %q with password %q: a find was answered (%v)", ep.Transport, cred[0], cred[1], err)
			}
		}
	}
}

// mongoFind runs one find at ep.
func mongoFind(ep drivers.Endpoint) error {
	o, err := mongo.ClientOptions(ep)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := gomongo.Connect(o)
	if err != nil {
		return err
	}
	defer c.Disconnect(ctx)
	return c.Database("dbsock").Collection("user").FindOne(ctx, bson.D{}).Err()
}

// TestServersRunUnprivileged: as root, every server dbsock starts locally
// runs as another user (its own where the machine has one, else nobody):
// none holds root's rights, whether the server would refuse root
// (PostgreSQL, PgBouncer) or not (Redis, memcached, FerretDB, MariaDB).
func TestServersRunUnprivileged(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("dbsock runs as an unprivileged user already")
	}
	for target := range targettest.Binaries {
		t.Run(target, func(t *testing.T) {
			srv := sharedLocal(t, target)
			pids := append([]int{srv.PID}, pidsNaming(t, srv.Unix().Address)...)
			for _, pid := range pids {
				if uid := uidOf(t, pid); uid == 0 {
					t.Errorf("%s's server process %d runs as root", target, pid)
				}
			}
		})
	}
}

// pidsNaming lists the processes whose command line names path (the second
// memcached, which serves the socket).
func pidsNaming(t *testing.T, path string) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline"); err == nil && strings.Contains(string(b), path) {
			pids = append(pids, pid)
		}
	}
	return pids
}
