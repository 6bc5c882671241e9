package compose

import (
	"context"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"

	"github.com/moby/moby/api/types/network"

	"github.com/dbsock/dbsock/drivers"
	mysqldrv "github.com/dbsock/dbsock/drivers/mysql"
	pgdrv "github.com/dbsock/dbsock/drivers/postgres"
)

// mysqlContainer runs the official mysql image (and dbsock/mariadb, which
// takes the same flags). The password reaches it through the environment
// the image reads.
func mysqlContainer(port int, _, bind string) (ContainerSpec, error) {
	pw, err := randomPassword()
	if err != nil {
		return ContainerSpec{}, err
	}
	rootPW, err := randomPassword()
	if err != nil {
		return ContainerSpec{}, err
	}
	return ContainerSpec{
		Cmd: []string{"mysqld", "--socket=/sock/mysqld.sock", "--port=" + strconv.Itoa(port), "--bind-address=" + bind,
			"--loose-mysqlx=OFF", "--max-connections=5000", "--max-allowed-packet=64M"},
		Env: map[string]string{"MYSQL_ROOT_PASSWORD": rootPW, "MYSQL_USER": MySQLUser, "MYSQL_PASSWORD": pw,
			"MYSQL_DATABASE": MySQLDatabase, "MYSQL_ROOT_HOST": "localhost"},
		Socket: "mysqld.sock", User: MySQLUser, Password: pw, Database: MySQLDatabase,
		Ready: mysqlLogin,
	}, nil
}

// redisContainer runs the official redis image (and dbsock/redis); the
// password goes through a config file in the private socket dir.
func redisContainer(port int, dir, bind string) (ContainerSpec, error) {
	pw, err := randomPassword()
	if err != nil {
		return ContainerSpec{}, err
	}
	conf := fmt.Sprintf("port %d\nbind %s\nunixsocket /sock/redis.sock\nunixsocketperm 777\nsave \"\"\nappendonly no\nrequirepass %s\n", port, bind, pw)
	if err := os.WriteFile(filepath.Join(dir, "redis.conf"), []byte(conf), 0o644); err != nil {
		return ContainerSpec{}, err
	}
	return ContainerSpec{Cmd: []string{"redis-server", "/sock/redis.conf"}, Socket: "redis.sock", Config: "redis.conf", Password: pw}, nil
}

// postgresContainer runs the official postgres image (and dbsock/postgres).
func postgresContainer(port int, _, bind string) (ContainerSpec, error) {
	pw, err := randomPassword()
	if err != nil {
		return ContainerSpec{}, err
	}
	p := strconv.Itoa(port)
	return ContainerSpec{
		Cmd: []string{"postgres", "-c", "listen_addresses=" + bind, "-c", "port=" + p, "-c", "unix_socket_directories=/sock",
			"-c", "unix_socket_permissions=0777", "-c", "max_connections=300"},
		Env:    map[string]string{"POSTGRES_USER": PostgresUser, "POSTGRES_PASSWORD": pw, "POSTGRES_DB": PostgresDatabase},
		Socket: ".s.PGSQL." + p, User: PostgresUser, Password: pw, Database: PostgresDatabase,
		Ready: postgresLogin,
	}, nil
}

// mongoContainer runs the official mongo image (and dbsock/ferretdb, which
// translates mongod's flags).
func mongoContainer(port int, _, bind string) (ContainerSpec, error) {
	p := strconv.Itoa(port)
	return ContainerSpec{Cmd: []string{"mongod", "--port", p, "--bind_ip", bind, "--unixSocketPrefix", "/sock", "--filePermissions", "0777"},
		Socket: "mongodb-" + p + ".sock"}, nil
}

// mysqlLogin is ready once the measuring account can log in over both
// transports: the official image runs a temporary server for set-up first.
func mysqlLogin(ctx context.Context, srv *Server) error {
	d := mysqldrv.New("", 0)
	for _, ep := range []drivers.Endpoint{srv.TCP, srv.Unix} {
		if _, err := d.Info(ctx, ep); err != nil {
			return err
		}
	}
	return nil
}

// postgresLogin is ready once the role can log in over both transports:
// the official image, too, runs a temporary server for set-up first.
func postgresLogin(ctx context.Context, srv *Server) error {
	d := pgdrv.New(0)
	for _, ep := range []drivers.Endpoint{srv.TCP, srv.Unix} {
		if _, err := d.Info(ctx, ep); err != nil {
			return err
		}
	}
	return nil
}

// portBinding publishes port on 127.0.0.1 only.
func portBinding(port int) network.PortMap {
	p := network.MustParsePort(strconv.Itoa(port) + "/tcp")
	return network.PortMap{p: []network.PortBinding{{HostIP: netip.MustParseAddr("127.0.0.1"), HostPort: strconv.Itoa(port)}}}
}

func ioReadFull(r io.Reader, b []byte) (int, error) {
	n, err := io.ReadFull(r, b)
	if err == io.ErrUnexpectedEOF || err == io.EOF {
		err = nil
	}
	return n, err
}
