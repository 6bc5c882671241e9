package compose

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/dbsock/dbsock/drivers"
	mysqldrv "github.com/dbsock/dbsock/drivers/mysql"
)

// MySQLUser and MySQLDatabase are the account and schema dbsock creates in
// the MySQL or MariaDB servers it starts.
const (
	MySQLUser     = "dbsock"
	MySQLDatabase = "dbsock"
)

// mysqlServer picks the server binary: Oracle MySQL's mysqld when present,
// else MariaDB's mariadbd (Debian's mysqld is a link to it).
func (l *Local) mysqlServer() (bin string, mariadb bool, ok bool) {
	if _, p := l.lookPath("mysqld"); p != "" && !strings.Contains(strings.ToLower(versionOutput(p)), "mariadb") {
		return p, false, true
	}
	if _, p := l.lookPath("mariadbd", "mysqld"); p != "" {
		return p, true, true
	}
	return "", false, false
}

func localMySQL(ctx context.Context, l *Local, name string) (*Server, error) {
	bin, mariadb, ok := l.mysqlServer()
	if !ok {
		return nil, fmt.Errorf("%w %s: local provider: neither mysqld nor mariadbd was found on PATH (%s) or in /usr/sbin (apt-get install mariadb-server, or run scripts/install-deps.sh)", ErrCannotSupply, name, searchPath())
	}
	ls, err := l.prepare(name, "mysql.sock")
	if err != nil {
		return nil, err
	}
	datadir := filepath.Join(ls.dir, "data")
	if err := l.mysqlInit(ctx, bin, mariadb, datadir, ls.dir); err != nil {
		return nil, ls.fail(err)
	}
	args := []string{"--no-defaults", "--datadir=" + datadir, "--socket=" + ls.sock,
		"--port=" + strconv.Itoa(ls.port), "--bind-address=127.0.0.1", "--skip-name-resolve",
		"--skip-log-bin", "--pid-file=" + filepath.Join(ls.dir, "mysqld.pid"), "--tmpdir=" + ls.dir,
		"--max-connections=5000", "--innodb-buffer-pool-size=64M", "--max-allowed-packet=64M"}
	if !mariadb {
		args = append(args, "--mysqlx=OFF")
	}
	if os.Geteuid() == 0 {
		args = append(args, "--user=root")
	}
	if err := ls.start(ctx, filepath.Base(bin), bin, args, nil, ""); err != nil {
		return nil, ls.fail(err)
	}
	password, err := randomPassword()
	if err != nil {
		return nil, ls.fail(err)
	}
	root := drivers.Endpoint{Transport: drivers.Unix, Address: ls.sock, User: "root"}
	if err := mysqlCreateAccount(ctx, root, password); err != nil {
		return nil, ls.fail(err)
	}
	origin := fmt.Sprintf("local process %s (pid %d)", bin, ls.proc.cmd.Process.Pid)
	return ls.server(name, origin,
		drivers.Endpoint{Transport: drivers.TCP, Address: ls.tcpAddr(), User: MySQLUser, Password: password, Database: MySQLDatabase},
		drivers.Endpoint{Transport: drivers.Unix, Address: ls.sock, User: MySQLUser, Password: password, Database: MySQLDatabase}), nil
}

// mysqlInit creates an empty data directory whose root account has no
// password and is reachable only through the socket of this private server.
func (l *Local) mysqlInit(ctx context.Context, bin string, mariadb bool, datadir, dir string) error {
	var cmd *exec.Cmd
	if mariadb {
		_, installDB := l.lookPath("mariadb-install-db", "mysql_install_db")
		if installDB == "" {
			return fmt.Errorf("initialize MariaDB data dir: mariadb-install-db not found next to %s", bin)
		}
		// --force: do not insist that this host's name resolves (it need
		// not, for a server that only listens on 127.0.0.1 and a socket).
		args := []string{"--no-defaults", "--datadir=" + datadir, "--auth-root-authentication-method=normal",
			"--skip-test-db", "--skip-name-resolve", "--force"}
		if os.Geteuid() == 0 {
			args = append(args, "--user=root")
		}
		cmd = exec.CommandContext(ctx, installDB, args...)
	} else {
		args := []string{"--no-defaults", "--initialize-insecure", "--datadir=" + datadir}
		if os.Geteuid() == 0 {
			args = append(args, "--user=root")
		}
		cmd = exec.CommandContext(ctx, bin, args...)
	}
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		if ctx.Err() != nil { // interrupted: the tool's output says nothing more
			return fmt.Errorf("interrupted while %s initialised the data dir: %w", filepath.Base(cmd.Path), ctx.Err())
		}
		return fmt.Errorf("initialize data dir %s with %s: %w\n%s", datadir, cmd.Path, err, tail(string(out), 8))
	}
	return nil
}

// mysqlCreateAccount creates the measuring account for both hosts a
// --skip-name-resolve server distinguishes: localhost (socket) and 127.0.0.1
// (TCP). The password travels over the socket, never on a command line.
func mysqlCreateAccount(ctx context.Context, root drivers.Endpoint, password string) error {
	connector, err := gomysql.NewConnector(mysqldrv.Config(root))
	if err != nil {
		return err
	}
	db := sql.OpenDB(connector)
	defer db.Close()
	stmts := []string{"CREATE DATABASE IF NOT EXISTS " + MySQLDatabase}
	for _, host := range []string{"localhost", "127.0.0.1"} {
		account := fmt.Sprintf("'%s'@'%s'", MySQLUser, host)
		stmts = append(stmts,
			"CREATE USER IF NOT EXISTS "+account+" IDENTIFIED BY '"+password+"'",
			"GRANT ALL ON "+MySQLDatabase+".* TO "+account)
	}
	for i, q := range stmts {
		if _, err := db.ExecContext(ctx, q); err != nil {
			// The statement may hold the password: name it by number only.
			return fmt.Errorf("create the dbsock account over %s (setup statement %d of %d): %w", root, i+1, len(stmts), err)
		}
	}
	return nil
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
