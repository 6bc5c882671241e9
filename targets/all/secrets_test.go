package all_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dbsock/dbsock/compose"
	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/internal/cpustat"
	"github.com/dbsock/dbsock/supply"
	"github.com/dbsock/dbsock/targets"
	"github.com/dbsock/dbsock/targets/targettest"
)

// serverTargets are the targets whose servers dbsock starts from binaries
// or images, with an account and a password.
var serverTargets = []string{"mysql", "redis", "mongo", "postgres", "memcached", "pgbouncer"}

// passwordsOf are the passwords of srv's endpoints.
func passwordsOf(t *testing.T, srv *supply.Server) []string {
	t.Helper()
	var pws []string
	for _, ep := range []drivers.Endpoint{srv.TCP(), srv.Unix()} {
		if ep.Password != "" {
			pws = append(pws, ep.Password)
		}
	}
	if len(pws) == 0 {
		t.Fatalf("%s: the server has no password", srv.Target)
	}
	return pws
}

// procWhere lists, for every process on this host, the /proc files
// (environ, cmdline) that hold one of secrets.
func procWhere(t *testing.T, secrets ...string) []string {
	t.Helper()
	var found []string
	files, _ := filepath.Glob("/proc/[0-9]*/environ")
	cmdlines, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, f := range append(files, cmdlines...) {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // gone, or not ours to read (the test runs as root where it matters)
		}
		for _, s := range secrets {
			if bytes.Contains(b, []byte(s)) {
				comm, _ := os.ReadFile(filepath.Join(filepath.Dir(f), "comm"))
				found = append(found, f+" ("+strings.TrimSpace(string(comm))+")")
			}
		}
	}
	return found
}

// TestLocalServersGetOnlyTheirEnvironment: a variable in dbsock's
// environment (a sentinel named like the external servers' passwords, and
// one named like a CI job's token) reaches no process of any local server,
// and the run's password is in no process's environment or command line
// on this host, nor in any of the run's files, while the server runs.
func TestLocalServersGetOnlyTheirEnvironment(t *testing.T) {
	sentinel, err := supply.RandomPassword()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("DBSOCK_MYSQL_PASSWORD", "sentinel-"+sentinel)
	t.Setenv("CI_JOB_TOKEN", "sentinel-"+sentinel)
	for _, target := range serverTargets {
		t.Run(target, func(t *testing.T) {
			srv := targettest.Local(t, target, targettest.Binaries[target]...)
			pids, err := cpustat.Descendants(os.Getpid())
			if err != nil {
				t.Fatal(err)
			}
			servers := 0
			for _, pid := range pids {
				if pid == os.Getpid() {
					continue
				}
				env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
				if err != nil {
					continue
				}
				servers++
				if bytes.Contains(env, []byte(sentinel)) {
					comm, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
					t.Errorf("process %d (%s) of the %s server has dbsock's sentinel variable in its environment", pid, strings.TrimSpace(string(comm)), target)
				}
			}
			if servers == 0 {
				t.Fatalf("no server process found under this test (pid %d)", os.Getpid())
			}
			if where := procWhere(t, passwordsOf(t, srv)...); len(where) > 0 {
				t.Errorf("the run's password is in %s", strings.Join(where, ", "))
			}
			// Nor is it in a file of the run's once the server is up.
			noFileHolds(t, filepath.Dir(filepath.Dir(srv.Unix().Address)), passwordsOf(t, srv))
		})
	}
}

// TestContainersHoldNoPassword: a server dbsock starts in a container,
// with the docker provider and with compose, has the run's password
// neither in the container's configuration (docker inspect of every
// container on this host) nor in any process's environment or command
// line on this host, while it runs; and the files dbsock wrote to hand it
// over are gone once the server is up, and again after a restart (which
// gets them back while it starts, and after which a login works).
func TestContainersHoldNoPassword(t *testing.T) {
	for _, provider := range []string{"docker", "compose"} {
		for _, target := range serverTargets {
			t.Run(provider+"/"+target, func(t *testing.T) {
				srv := sharedSupplied(t, target, provider).srv
				pws := passwordsOf(t, srv)
				if where := procWhere(t, pws...); len(where) > 0 {
					t.Errorf("the run's password is in %s", strings.Join(where, ", "))
				}
				out := inspectEveryContainer(t)
				if !bytes.Contains(out, []byte(srv.SocketDir)) {
					t.Fatalf("docker inspect does not show the server's container (no bind mount of %s)", srv.SocketDir)
				}
				for _, pw := range pws {
					if bytes.Contains(out, []byte(pw)) {
						t.Errorf("docker inspect shows the run's password")
					}
				}
				noFileHolds(t, filepath.Dir(srv.SocketDir), pws)
				ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
				defer cancel()
				if err := srv.Restart(ctx); err != nil {
					t.Fatalf("restart: %v", err)
				}
				tg, _ := targets.Lookup(target)
				for _, ep := range []drivers.Endpoint{srv.TCP(), srv.Unix()} {
					if _, err := tg.Settings().Driver(drivers.Workload{}).Info(ctx, ep); err != nil {
						t.Errorf("a login over %s after the restart: %v", ep.Transport, err)
					}
				}
				noFileHolds(t, filepath.Dir(srv.SocketDir), pws)
			})
		}
	}
}

// inspectEveryContainer is docker inspect of every container on this host.
// Tests of other packages start and remove containers meanwhile: one that
// is gone between the listing and its inspect is left out, not an error.
func inspectEveryContainer(t *testing.T) []byte {
	t.Helper()
	ids, err := exec.Command("docker", "ps", "-aq").Output()
	if err != nil {
		t.Fatalf("docker ps: %v", err)
	}
	var all []byte
	for _, id := range strings.Fields(string(ids)) {
		var stderr bytes.Buffer
		inspect := exec.Command("docker", "inspect", id)
		inspect.Stderr = &stderr
		out, err := inspect.Output()
		if err != nil && strings.Contains(stderr.String(), "No such") {
			continue
		}
		if err != nil {
			t.Fatalf("docker inspect %s: %v\n%s", id, err, stderr.String())
		}
		all = append(all, out...)
	}
	return all
}

// noFileHolds fails t for each file under dir that holds one of pws.
func noFileHolds(t *testing.T, dir string, pws []string) {
	t.Helper()
	_ = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		b, _ := os.ReadFile(path)
		for _, pw := range pws {
			if bytes.Contains(b, []byte(pw)) {
				t.Errorf("%s holds the run's password while the server runs", path)
			}
		}
		return nil
	})
}

// TestContainerSecretsGoOnceRead: a password file handed to a container
// (docker: in its socket dir; compose: a Compose secret) is removed as
// soon as the container has read it, well before the server is ready
// (MariaDB's set-up takes seconds after that), so that a run killed while
// its server starts leaves none behind.
func TestContainerSecretsGoOnceRead(t *testing.T) {
	if testing.Short() {
		t.Skip("needs Docker and images; skipped with -short")
	}
	tg, _ := targets.Lookup("mysql")
	if err := exec.Command("docker", "image", "inspect", tg.Container.Offline).Run(); err != nil {
		t.Skipf("Docker image %s is not here (run make images)", tg.Container.Offline)
	}
	for _, c := range []struct{ provider, file string }{
		{"docker", filepath.Join("dbsock-*", "mysql-*", "mysql-password")},
		{"compose", filepath.Join("dbsock-*", "compose-*", "secrets", "mysql-password")},
	} {
		t.Run(c.provider, func(t *testing.T) {
			tmp, err := os.MkdirTemp("/tmp", "t")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(tmp) })
			t.Setenv("TMPDIR", tmp)
			images := map[string]string{"mysql": tg.Container.Offline}
			var p supply.Provider
			if c.provider == "docker" {
				d := supply.NewDocker()
				d.Images, p = images, d
			} else {
				cp := compose.NewCompose(targets.Containers())
				cp.Images, p = images, cp
			}
			t.Cleanup(func() { _ = p.Close() })
			seen, gone := secretGoesBeforeReady(t, p, tg, filepath.Join(tmp, c.file))
			if !seen || !gone {
				t.Fatalf("password file seen %v, removed before the server was ready %v", seen, gone)
			}
		})
	}
}

// secretGoesBeforeReady supplies tg's server from p and watches file
// meanwhile: whether it was there, and whether it was gone again before
// the server was ready.
func secretGoesBeforeReady(t *testing.T, p supply.Provider, tg *targets.Target, file string) (seen, gone bool) {
	type supplied struct {
		srv *supply.Server
		err error
	}
	done := make(chan supplied, 1)
	go func() {
		srv, err := p.Supply(context.Background(), tg.Supply())
		done <- supplied{srv, err}
	}()
	for {
		select {
		case s := <-done:
			if s.err != nil {
				t.Fatal(s.err)
			}
			t.Cleanup(func() { _ = s.srv.Stop(context.Background()) })
			return seen, gone
		case <-time.After(2 * time.Millisecond):
		}
		files, _ := filepath.Glob(file)
		switch {
		case len(files) > 0:
			seen = true
		case seen:
			gone = true
		}
	}
}
