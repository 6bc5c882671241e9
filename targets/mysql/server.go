package mysql

import (
	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/supply"
)

// description is MySQL's server in a container: the official mysql image
// (and dbsock/mariadb, which takes the same flags), listening on the
// socket in /sock and on its TCP port. The passwords reach it in the
// files its MYSQL_PASSWORD_FILE and MYSQL_ROOT_PASSWORD_FILE name, never
// in its environment: bootstrap passwords, which rotate changes to the
// run's once the server is up, since the official image leaves the ones
// it read in mysqld's environment. With the run's certificate it also
// serves TLS on its one port. Locally localServer starts mysqld or
// mariadbd (local.go). compose.yaml's mysql service comes from it too.
var description = supply.Description{
	Name:      name,
	Binary:    "mysqld",
	Instances: []supply.Instance{{Name: "mysqld", Args: containerArgs}},
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
	Local:     localServer,
}

// recipe starts mysqld (Oracle MySQL) or mariadbd locally, and mysql:8.4
// in a container (dbsock/mariadb:10.11 without a registry).
var recipe = description.Recipe()

// containerArgs are mysqld's flags in a container at a.
func containerArgs(a supply.At) []string {
	args := []string{"--socket=" + a.Sock, "--port=" + a.Port, "--bind-address=" + a.Bind(","),
		// Hosts as addresses, so that the processlist tells 127.0.0.1
		// from ::1 (resolved, both are "localhost:PORT").
		"--skip-name-resolve",
		"--loose-mysqlx=OFF", "--max-connections=5000", "--max-allowed-packet=64M", "--innodb-flush-log-at-trx-commit=2"}
	if a.TLSPort != "" {
		args = append(args, TLSArgs(a.TLS)...)
	}
	return args
}
