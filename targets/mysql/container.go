package mysql

import (
	"strconv"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/supply"
)

// recipe starts mysqld (Oracle MySQL) or mariadbd locally, and mysql:8.4
// in a container (dbsock/mariadb:10.11 without a registry).
var recipe = supply.Recipe{Local: localServer, Container: &supply.Container{Image: "mysql:8.4", Offline: "dbsock/mariadb:10.11", UID: 999,
	Spec: container, Rotate: rotate}}

// container runs the official mysql image (and dbsock/mariadb, which
// takes the same flags). The passwords reach it in files in the socket
// dir that the image's MYSQL_PASSWORD_FILE and MYSQL_ROOT_PASSWORD_FILE
// name, never in its environment: bootstrap passwords, which rotate
// changes to the run's (pw) once the server is up, since the official
// image leaves the ones it read in mysqld's environment.
// With the run's TLS files it also serves TLS on its one port.
func container(sf supply.SpecFor) (supply.ContainerSpec, error) {
	port, bind := sf.Port, sf.Bind
	pw, err := supply.RandomPassword()
	if err != nil {
		return supply.ContainerSpec{}, err
	}
	boot, err := bootstrap(secretPassword, secretRootPassword)
	if err != nil {
		return supply.ContainerSpec{}, err
	}
	spec := supply.ContainerSpec{
		Cmd: []string{"mysqld", "--socket=/sock/mysqld.sock", "--port=" + strconv.Itoa(port), "--bind-address=" + bind,
			// Hosts as addresses, so that the processlist tells 127.0.0.1
			// from ::1 (resolved, both are "localhost:PORT").
			"--skip-name-resolve",
			"--loose-mysqlx=OFF", "--max-connections=5000", "--max-allowed-packet=64M", "--innodb-flush-log-at-trx-commit=2"},
		Env: map[string]string{"MYSQL_ROOT_PASSWORD_FILE": "/sock/mysql-root-password", "MYSQL_USER": User,
			"MYSQL_PASSWORD_FILE": "/sock/mysql-password", "MYSQL_DATABASE": Database, "MYSQL_ROOT_HOST": "localhost"},
		Secrets: boot,
		Socket:  "mysqld.sock", User: User, Password: pw, Database: Database,
		Ready: supply.LoginReady(New("", drivers.Workload{})),
	}
	if sf.TLS.Cert != "" {
		spec.Cmd, spec.TLSPort = append(spec.Cmd, TLSArgs(sf.TLS)...), sf.Port
	}
	return spec, nil
}

// bootstrap is a fresh random password for each secret file of names.
func bootstrap(names ...string) (map[string]string, error) {
	m := map[string]string{}
	for _, name := range names {
		pw, err := supply.RandomPassword()
		if err != nil {
			return nil, err
		}
		m[name] = pw
	}
	return m, nil
}
