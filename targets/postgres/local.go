package postgres

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/supply"
)

// User is the role dbsock uses, and Database (postgres.go) the database,
// in the PostgreSQL servers it starts.
const (
	User = "dbsock"
)

// localServer starts a private PostgreSQL as description says.
func localServer(ctx context.Context, l *supply.Local, name string) (*supply.Server, error) {
	return recipe.Local(ctx, l, name)
}

// postgresBin finds a PostgreSQL server binary: on PATH, else in Debian's
// versioned /usr/lib/postgresql/N/bin or Homebrew's postgresql@N kegs
// (newest first).
func postgresBin(l *supply.Local, name string) string {
	_, p := l.FindIn(append([]string{"/usr/lib/postgresql/*/bin"}, supply.HomebrewKegs("postgresql")...), name)
	return p
}

// findLocal finds the server binary, when initdb is there too.
func findLocal(l *supply.Local, name string) (string, error) {
	initdb, serverBin := postgresBin(l, "initdb"), postgresBin(l, server)
	if initdb == "" || serverBin == "" {
		return "", fmt.Errorf("%w %s: local provider: PostgreSQL's initdb and postgres were not found on PATH (%s), in /usr/lib/postgresql/*/bin or in Homebrew's postgresql kegs (apt-get install postgresql, or brew install postgresql@16, or run scripts/install-deps.sh)", supply.ErrCannotSupply, name, supply.SearchPath())
	}
	return serverBin, nil
}

// initdb initialises the server's data directory (dataDir) with the run's
// account, its password in a file of the server's user's that is gone
// once initdb has read it.
func initdb(ctx context.Context, l *supply.Local, ls *supply.LocalServer, _, password string) error {
	bin := postgresBin(l, "initdb")
	pwfile := filepath.Join(ls.Dir, "pw")
	if err := os.WriteFile(pwfile, []byte(password+"\n"), 0o600); err != nil {
		return err
	}
	defer os.Remove(pwfile)
	if err := ls.Own(pwfile); err != nil {
		return err
	}
	data := dataDir(ls.Dir)
	cmd := exec.CommandContext(ctx, bin, "-D", data, "-U", User, "--pwfile="+pwfile,
		"--auth-local=scram-sha-256", "--auth-host=scram-sha-256", "--no-sync", "-E", "UTF8", "--locale=C")
	cmd.Dir = ls.Dir
	cmd.Env = supply.ServerEnv()
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: ls.RunAs}
	out, err := cmd.CombinedOutput()
	if err != nil && ctx.Err() != nil {
		return fmt.Errorf("interrupted while initdb initialised the data dir: %w", ctx.Err())
	}
	if err != nil {
		return fmt.Errorf("initialize PostgreSQL data dir %s with %s: %w%s\n%s", data, bin, err, supply.ClosedTo(err, ls.Dir, ls.RunAs), supply.Tail(string(out), 8))
	}
	return nil
}

// dataDir is a local server's data directory in its directory dir.
func dataDir(dir string) string { return filepath.Join(dir, "data") }

// loginProbe is the local server's readiness: accepting connections is not
// yet ready, as PostgreSQL refuses logins while it starts up ("the
// database system is starting up"); it logs in over both endpoints, at the
// first start and after every restart (--instances) alike.
func loginProbe(eps ...drivers.Endpoint) func(context.Context) error {
	return func(ctx context.Context) error {
		for _, ep := range eps {
			if _, err := New(drivers.Workload{}).Info(ctx, ep); err != nil {
				return err
			}
		}
		return nil
	}
}

// TLSArgs are the server settings that turn TLS on with the run's
// certificate: a client that asks for it gets it, on the server's one
// port; one that does not stays plain.
func TLSArgs(tf supply.TLSFiles) []string {
	return []string{"-c", "ssl=on", "-c", "ssl_cert_file=" + tf.Cert, "-c", "ssl_key_file=" + tf.Key,
		"-c", "ssl_min_protocol_version=TLSv1.2"}
}
