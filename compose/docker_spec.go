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

// spec is how one target's container is started and reached.
type spec struct {
	cmd                      []string
	env                      map[string]string
	socket                   string // file name in the socket dir
	config                   string // file in the socket dir holding a secret, removed once the server is up
	user, password, database string
	ready                    func(context.Context, *Server) error
}

// containerSpec builds the command line for target's official image (and
// dbsock's offline images, which take the same flags). Passwords never go
// on a command line: MySQL's through the environment the image reads,
// Redis's through a config file in the private socket dir.
func containerSpec(target string, port int, dir, bind string) (spec, error) {
	p := strconv.Itoa(port)
	switch target {
	case "mysql":
		pw, err := randomPassword()
		if err != nil {
			return spec{}, err
		}
		rootPW, err := randomPassword()
		if err != nil {
			return spec{}, err
		}
		return spec{
			cmd: []string{"mysqld", "--socket=/sock/mysqld.sock", "--port=" + p, "--bind-address=" + bind,
				"--loose-mysqlx=OFF", "--max-connections=5000", "--max-allowed-packet=64M"},
			env: map[string]string{"MYSQL_ROOT_PASSWORD": rootPW, "MYSQL_USER": MySQLUser, "MYSQL_PASSWORD": pw,
				"MYSQL_DATABASE": MySQLDatabase, "MYSQL_ROOT_HOST": "localhost"},
			socket: "mysqld.sock", user: MySQLUser, password: pw, database: MySQLDatabase,
			ready: mysqlLogin,
		}, nil
	case "redis":
		pw, err := randomPassword()
		if err != nil {
			return spec{}, err
		}
		conf := fmt.Sprintf("port %s\nbind %s\nunixsocket /sock/redis.sock\nunixsocketperm 777\nsave \"\"\nappendonly no\nrequirepass %s\n", p, bind, pw)
		if err := os.WriteFile(filepath.Join(dir, "redis.conf"), []byte(conf), 0o644); err != nil {
			return spec{}, err
		}
		return spec{cmd: []string{"redis-server", "/sock/redis.conf"}, socket: "redis.sock", config: "redis.conf", password: pw}, nil
	case "postgres":
		pw, err := randomPassword()
		if err != nil {
			return spec{}, err
		}
		return spec{
			cmd: []string{"postgres", "-c", "listen_addresses=" + bind, "-c", "port=" + p, "-c", "unix_socket_directories=/sock",
				"-c", "unix_socket_permissions=0777", "-c", "max_connections=300"},
			env:    map[string]string{"POSTGRES_USER": PostgresUser, "POSTGRES_PASSWORD": pw, "POSTGRES_DB": PostgresDatabase},
			socket: ".s.PGSQL." + p, user: PostgresUser, password: pw, database: PostgresDatabase,
			ready: postgresLogin,
		}, nil
	case "mongo":
		return spec{cmd: []string{"mongod", "--port", p, "--bind_ip", bind, "--unixSocketPrefix", "/sock", "--filePermissions", "0777"},
			socket: "mongodb-" + p + ".sock"}, nil
	}
	return spec{}, fmt.Errorf("no container spec for %s", target)
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
