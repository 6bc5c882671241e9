package mysql

import (
	"context"
	"database/sql"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/supply"
)

// User and Database are the account and schema dbsock creates in
// the MySQL or MariaDB servers it starts.
const (
	User     = "dbsock"
	Database = "dbsock"
)

// oracleDir is where Oracle's MySQL installer puts its binaries, off PATH.
const oracleDir = "/usr/local/mysql/bin"

// mysqlServer picks the server binary: Oracle MySQL's mysqld when present,
// else MariaDB's mariadbd (Debian's mysqld is a link to it).
// Homebrew's keg-only mysql@N and mariadb@N count too, and Oracle's
// installer's directory (oracleDir).
func mysqlServer(l *supply.Local) (bin string, mariadb bool, ok bool) {
	if _, p := l.FindIn(append(supply.HomebrewKegs("mysql"), oracleDir), "mysqld"); p != "" && !strings.Contains(strings.ToLower(supply.VersionOutput(p)), "mariadb") {
		return p, false, true
	}
	if _, p := l.FindIn(supply.HomebrewKegs("mariadb"), "mariadbd", "mysqld"); p != "" {
		return p, true, true
	}
	return "", false, false
}

// findLocal finds the server binary (mysqlServer).
func findLocal(l *supply.Local, name string) (string, error) {
	bin, _, ok := mysqlServer(l)
	if !ok {
		return "", fmt.Errorf("%w %s: local provider: neither mysqld nor mariadbd was found on PATH (%s) or in /usr/sbin (apt-get install mariadb-server, or run scripts/install-deps.sh)", supply.ErrCannotSupply, name, supply.SearchPath())
	}
	return bin, nil
}

// isMariaDB says whether bin, as mysqlServer found it, is MariaDB's.
func isMariaDB(bin string) bool {
	return filepath.Base(bin) != "mysqld" || strings.Contains(strings.ToLower(supply.VersionOutput(bin)), "mariadb")
}

// prepare initialises the server's data directory (mysqlInit), as the
// mysql user when dbsock is root (mariadbd and mysqld drop root
// themselves with --user).
func prepare(ctx context.Context, l *supply.Local, ls *supply.LocalServer, bin, _ string) error {
	osUser := ""
	if ls.RunAs != nil {
		osUser = "mysql"
	}
	return mysqlInit(l, ctx, bin, isMariaDB(bin), dataDir(ls.Dir), ls.Dir, osUser)
}

// createAccount makes the run's account over the server's socket, as root
// (mysqlCreateAccount), once it is first up.
func createAccount(ctx context.Context, ls *supply.LocalServer, password string) error {
	root := drivers.SocketAt(ls.Sock)
	root.User = "root"
	return mysqlCreateAccount(ctx, root, password)
}

// dataDir is a local server's data directory in its directory dir.
func dataDir(dir string) string { return filepath.Join(dir, "data") }

// mysqlInit creates an empty data directory, owned by osUser when given,
// whose root account has no password until mysqlCreateAccount locks the
// server: meanwhile it is reachable only through the socket of this
// private server, in a directory no other user may enter.
func mysqlInit(l *supply.Local, ctx context.Context, bin string, mariadb bool, datadir, dir, osUser string) error {
	var cmd *exec.Cmd
	if mariadb {
		_, installDB := l.Find("mariadb-install-db", "mysql_install_db")
		if installDB == "" {
			return fmt.Errorf("initialize MariaDB data dir for %s: %w", bin, supply.NotFound(name, "mariadb-install-db", "apt-get install mariadb-server"))
		}
		// --force: do not insist that this host's name resolves (it need
		// not, for a server that only listens on 127.0.0.1 and a socket).
		args := []string{"--no-defaults", "--datadir=" + datadir, "--auth-root-authentication-method=normal",
			"--skip-test-db", "--skip-name-resolve", "--force"}
		if osUser != "" {
			args = append(args, "--user="+osUser)
		}
		cmd = exec.CommandContext(ctx, installDB, args...)
	} else {
		args := []string{"--no-defaults", "--initialize-insecure", "--datadir=" + datadir}
		if osUser != "" {
			args = append(args, "--user="+osUser)
		}
		cmd = exec.CommandContext(ctx, bin, args...)
	}
	cmd.Dir = dir
	// Its temporary files go to this server's own directory: runs at the
	// same time must not meet in a shared /tmp.
	cmd.Env = supply.ServerEnv("TMPDIR=" + dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		if ctx.Err() != nil { // interrupted: the tool's output says nothing more
			return fmt.Errorf("interrupted while %s initialised the data dir: %w", filepath.Base(cmd.Path), ctx.Err())
		}
		return fmt.Errorf("initialize data dir %s with %s: %w\n%s", datadir, cmd.Path, err, errorLines(string(out)))
	}
	return nil
}

// errorLines are the lines of a tool's output that say what went wrong
// (ERROR, or the server's [ERROR] log lines), else its last lines: the
// installer ends with boilerplate about where to ask for help.
func errorLines(out string) string {
	var errs []string
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "ERROR") || strings.Contains(line, "[ERROR]") {
			errs = append(errs, strings.TrimSpace(line))
		}
	}
	if len(errs) == 0 {
		return supply.Tail(out, 8)
	}
	return supply.Tail(strings.Join(errs, "\n"), 8)
}

// mysqlCreateAccount creates the measuring account for the hosts a
// --skip-name-resolve server distinguishes: localhost (socket), 127.0.0.1
// (TCP) and ::1 (TCP on the IPv6 loopback), and then locks the server to it: every other account but the
// server's own system accounts is dropped (MariaDB's installer makes
// root@127.0.0.1, root@::1 and anonymous ones without a password), and
// root@localhost gets a random password that nobody keeps. The password
// travels over the socket, never on a command line.
func mysqlCreateAccount(ctx context.Context, root drivers.Endpoint, password string) error {
	connector, err := gomysql.NewConnector(Config(root))
	if err != nil {
		return err
	}
	db := sql.OpenDB(connector)
	defer db.Close()
	db.SetMaxOpenConns(1) // root's password changes last, on this connection
	stmts := []string{"CREATE DATABASE IF NOT EXISTS " + Database}
	for _, host := range append([]string{"localhost"}, supply.Loopbacks()...) {
		account := fmt.Sprintf("'%s'@'%s'", User, host)
		stmts = append(stmts,
			"CREATE USER IF NOT EXISTS "+account+" IDENTIFIED BY '"+password+"'",
			"GRANT ALL ON "+Database+".* TO "+account)
	}
	others, err := otherAccounts(ctx, db)
	if err != nil {
		return fmt.Errorf("lock the server over %s: list its accounts: %w", root, err)
	}
	for _, a := range others {
		stmts = append(stmts, "DROP USER "+a)
	}
	rootPW, err := supply.RandomPassword()
	if err != nil {
		return err
	}
	stmts = append(stmts, "ALTER USER 'root'@'localhost' IDENTIFIED BY '"+rootPW+"'")
	for i, q := range stmts {
		if _, err := db.ExecContext(ctx, q); err != nil {
			// The statement may hold the password: name it by number only.
			return fmt.Errorf("create the dbsock account over %s (setup statement %d of %d): %w", root, i+1, len(stmts), err)
		}
	}
	return nil
}

// systemAccounts are the servers' own locked accounts, kept.
var systemAccounts = map[string]bool{"mariadb.sys": true, "mysql.sys": true, "mysql.session": true, "mysql.infoschema": true}

// otherAccounts are the accounts that are neither root@localhost, nor the
// server's own, nor dbsock's, quoted for DROP USER.
func otherAccounts(ctx context.Context, db *sql.DB) ([]string, error) {
	rows, err := db.QueryContext(ctx, "SELECT User, Host FROM mysql.user")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var u, h string
		if err := rows.Scan(&u, &h); err != nil {
			return nil, err
		}
		if systemAccounts[u] || u == User || (u == "root" && h == "localhost") {
			continue
		}
		out = append(out, quoteAccount(u, h))
	}
	return out, rows.Err()
}

// quoteAccount quotes user@host for an account statement.
func quoteAccount(user, host string) string {
	q := func(s string) string { return "'" + strings.NewReplacer(`\`, `\\`, "'", `\'`).Replace(s) + "'" }
	return q(user) + "@" + q(host)
}

// TLSArgs are the server options that turn TLS on with the run's
// certificate: a client that asks for it gets it; one that does not stays
// plain (require_secure_transport stays off).
func TLSArgs(tf supply.TLSFiles) []string {
	return []string{"--ssl-cert=" + tf.Cert, "--ssl-key=" + tf.Key, "--ssl-ca=" + tf.CA}
}
