package mongo

import (
	"github.com/dbsock/dbsock/internal/setting"
	"github.com/dbsock/dbsock/supply"
)

// description is MongoDB's server in a container: the official mongo
// image (and dbsock/ferretdb, which translates mongod's flags) with the
// run's account: the image's MONGO_INITDB_ROOT_USERNAME and
// MONGO_INITDB_ROOT_PASSWORD_FILE (a secret's file, never the password in
// its environment) make the user in admin and start the server with
// --auth (dbsock/ferretdb: its SCRAM authentication), so that every
// command but the handshake needs it. Locally localServer starts mongod
// or FerretDB (local.go). compose.yaml's mongo service comes from it too.
var description = supply.Description{
	Name:      name,
	Binary:    "mongod",
	Instances: []supply.Instance{{Name: "mongod", Args: containerArgs}},
	Socket:    func(port string) string { return "mongodb-" + port + ".sock" },
	Port:      17017,
	User:      User,
	Secrets:   []string{"mongo-password"},
	Env: func(a supply.At) map[string]string {
		return map[string]string{"MONGO_INITDB_ROOT_USERNAME": User, "MONGO_INITDB_ROOT_PASSWORD_FILE": a.Secret("mongo-password")}
	},
	NoContainerTLS: setting.Err("its container serves no TLS: mongod (mongo:7.0) serves TLS on its one port and FerretDB (dbsock/ferretdb) on a second one, and one container spec serves both images; %s local serves FerretDB's",
		setting.Provider),
	Container: supply.Container{Image: "mongo:7.0", Offline: "dbsock/ferretdb:1.24", UID: 999,
		OfflineBuilt: "FerretDB built from the Go module proxy (scripts/install-deps.sh) on a Debian base, by make images"},
	Local: localServer,
}

// recipe starts mongod, or FerretDB speaking its wire protocol, locally,
// and mongo:7.0 in a container (dbsock/ferretdb:1.24 without a registry).
var recipe = description.Recipe()

// containerArgs are mongod's flags in a container at a.
func containerArgs(a supply.At) []string {
	args := []string{"--port", a.Port, "--bind_ip", a.Bind(","), "--unixSocketPrefix", a.Dir, "--filePermissions", a.SocketMode}
	if a.IPv6() {
		args = append(args, "--ipv6") // mongod listens on an IPv6 address only with it
	}
	return args
}
