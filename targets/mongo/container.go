package mongo

import (
	"strconv"

	"github.com/dbsock/dbsock/compose"
)

// recipe starts mongod, or FerretDB speaking its wire protocol, locally,
// and mongo:7.0 in a container (dbsock/ferretdb:1.24 without a registry).
var recipe = compose.Recipe{Local: localServer, Container: &compose.Container{Image: "mongo:7.0", Offline: "dbsock/ferretdb:1.24", UID: 999, Spec: container}}

// mongoContainer runs the official mongo image (and dbsock/ferretdb, which
// translates mongod's flags).
func container(port int, _, bind string) (compose.ContainerSpec, error) {
	p := strconv.Itoa(port)
	return compose.ContainerSpec{Cmd: []string{"mongod", "--port", p, "--bind_ip", bind, "--unixSocketPrefix", "/sock", "--filePermissions", "0777"},
		Socket: "mongodb-" + p + ".sock"}, nil
}
