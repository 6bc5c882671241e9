package mysql

import (
	"path/filepath"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/supply"
)

// description is MySQL's server, whichever provider starts it. Locally:
// Oracle MySQL's mysqld or MariaDB's mariadbd (mysqlServer), its data
// directory initialised empty (mysqlInit), run as the mysql user when
// dbsock is root, and the run's account made over its socket once it is
// up (mysqlCreateAccount). In a container: the official mysql image (and
// dbsock/mariadb, which takes the same flags); the passwords reach it in
// the files its MYSQL_PASSWORD_FILE and MYSQL_ROOT_PASSWORD_FILE name,
// never in its environment: bootstrap passwords, which rotate changes to
// the run's once the server is up, since the official image leaves the
// ones it read in mysqld's environment. With the run's certificate it
// serves TLS on its one port. compose.yaml's mysql service comes from it
// too.
var description = supply.Description{
	Name:      name,
	Binary:    "mysqld",
	Find:      findLocal,
	Prepare:   prepare,
	Started:   createAccount,
	OSUser:    "mysql",
	Instances: []supply.Instance{{Name: "mysqld", Args: args}},
	Socket:    supply.FixedSocket("mysqld.sock"),
	Port:      13306,
	User:      User,
	Database:  Database,
	Secrets:   []string{secretPassword, secretRootPassword},
	Env: func(a supply.At) map[string]string {
		return map[string]string{"MYSQL_ROOT_PASSWORD_FILE": a.Secret(secretRootPassword), "MYSQL_USER": User,
			"MYSQL_PASSWORD_FILE": a.Secret(secretPassword), "MYSQL_DATABASE": Database, "MYSQL_ROOT_HOST": "localhost"}
	},
	TLS:       supply.TLSOnPort,
	Ready:     supply.LoginReady(New("", drivers.Workload{})),
	Container: supply.Container{Image: "mysql:8.4", Offline: "dbsock/mariadb:10.11", UID: 999, Rotate: rotate},
}

// recipe starts mysqld (Oracle MySQL) or mariadbd locally, and mysql:8.4
// in a container (dbsock/mariadb:10.11 without a registry).
var recipe = description.Recipe()

// args are mysqld's flags at a: locally no option file (--no-defaults
// comes first, as mysqld wants it), its data, pid and temporary files in
// its directory, no binary log and a small buffer pool; in a container
// the image's.
func args(a supply.At) []string {
	var args []string
	if a.Local() {
		args = []string{"--no-defaults", "--datadir=" + dataDir(a.Dir), "--skip-log-bin", "--pid-file=" + filepath.Join(a.Dir, "mysqld.pid"),
			"--tmpdir=" + a.Dir, "--innodb-buffer-pool-size=64M"}
	}
	args = append(args, "--socket="+a.Sock, "--port="+a.Port, "--bind-address="+a.Bind(","),
		// Hosts as addresses, so that the processlist tells 127.0.0.1
		// from ::1 (resolved, both are "localhost:PORT").
		"--skip-name-resolve",
		// No X plugin, which would listen on every interface (loose-:
		// MariaDB, which has none, only warns).
		"--loose-mysqlx=OFF",
		// A throwaway server: a write waits for no fsync (PostgreSQL runs
		// with fsync=off).
		"--max-connections=5000", "--max-allowed-packet=64M", "--innodb-flush-log-at-trx-commit=2")
	if a.TLSPort != "" {
		args = append(args, TLSArgs(a.TLS)...)
	}
	return args
}
