package mongo

import (
	"strconv"
	"strings"

	"github.com/dbsock/dbsock/internal/setting"
	"github.com/dbsock/dbsock/supply"
)

// recipe starts mongod, or FerretDB speaking its wire protocol, locally,
// and mongo:7.0 in a container (dbsock/ferretdb:1.24 without a registry).
var recipe = supply.Recipe{Local: localServer, Container: &supply.Container{Image: "mongo:7.0", Offline: "dbsock/ferretdb:1.24", UID: 999, Spec: container,
	OfflineBuilt: "FerretDB built from the Go module proxy (scripts/install-deps.sh) on a Debian base, by make images"}}

// container runs the official mongo image (and dbsock/ferretdb, which
// translates mongod's flags) with the run's account: the image's
// MONGO_INITDB_ROOT_USERNAME and MONGO_INITDB_ROOT_PASSWORD_FILE (a file
// in the socket dir, never the password in its environment) make the user
// in admin and start the server with --auth (dbsock/ferretdb: its SCRAM
// authentication), so that every command but the handshake needs it.
func container(sf supply.SpecFor) (supply.ContainerSpec, error) {
	p, bind := strconv.Itoa(sf.Port), sf.Bind
	pw, err := supply.RandomPassword()
	if err != nil {
		return supply.ContainerSpec{}, err
	}
	cmd := []string{"mongod", "--port", p, "--bind_ip", bind, "--unixSocketPrefix", "/sock", "--filePermissions", "0777"}
	if strings.Contains(bind, ":") {
		cmd = append(cmd, "--ipv6") // mongod listens on an IPv6 address only with it
	}
	return supply.ContainerSpec{Cmd: cmd,
		NoTLS: setting.Errorf("its container serves no TLS: mongod (mongo:7.0) serves TLS on its one port and FerretDB (dbsock/ferretdb) on a second one, and one container spec serves both images; %s local serves FerretDB's",
			setting.Provider),
		Env:     map[string]string{"MONGO_INITDB_ROOT_USERNAME": User, "MONGO_INITDB_ROOT_PASSWORD_FILE": "/sock/mongo-password"},
		Secrets: map[string]string{"mongo-password": pw},
		Socket:  "mongodb-" + p + ".sock", User: User, Password: pw}, nil
}
