package redis

import (
	"strconv"
	"strings"
	"syscall"

	"github.com/dbsock/dbsock/supply"
)

// description is Redis's server, whichever provider starts it: redis-server
// with its settings as arguments and the run's password on its standard
// input ("-": a configuration read from it, here requirepass alone), so
// that it never shows in a process listing; locally run as the redis user
// when dbsock is root, in a container (redis:7.4, or dbsock/redis:7.0
// without a registry) through the image's entrypoint, which drops root,
// the password from its secret. With the run's certificate it serves TLS
// at a second port. compose.yaml's redis service comes from it too.
var description = supply.Description{
	Name:      name,
	Binary:    "redis-server",
	Install:   "apt-get install redis-server, or run scripts/install-deps.sh",
	Instances: []supply.Instance{{Name: "redis-server", Args: args}},
	Socket:    supply.FixedSocket("redis.sock"),
	Port:      16379,
	Stdin:     "requirepass %s\n",
	Secrets:   []string{"redis-password"},
	TLS:       supply.TLSApart,
	// Through the image's entrypoint, as "redis-server ..." is (so that
	// it runs as the redis user, with the image's umask); the shell's exec
	// makes it the container's first process, so that a stop's SIGTERM
	// reaches it.
	Entrypoint: true,
	OSUser:     "redis",
	// SIGTERM only sets a flag that Redis reads in its next cron tick (up
	// to 100 ms at hz 10), and then, without persistence, it only exits:
	// SIGKILL stops it the same way at once.
	StopSignal: syscall.SIGKILL,
	Note: "The password reaches redis-server on stdin (a here-document the shell\n" +
		"fills in from the secret's file), never on a command line or in an\n" +
		"environment; through the image's entrypoint, as \"redis-server ...\"\n" +
		"is (so that it runs as the redis user, with the image's umask); exec\n" +
		"makes redis-server the container's first process, so that a stop's\n" +
		"SIGTERM reaches it.",
	Container: supply.Container{Image: "redis:7.4", Offline: "dbsock/redis:7.0", UID: 999},
}

// recipe starts redis-server as description says.
var recipe = description.Recipe()

// args are redis-server's arguments at a: the configuration from stdin,
// then its listeners, no persistence, and TLS when a has it.
func args(a supply.At) []string {
	args := append([]string{"-", "--port", a.Port, "--bind"}, a.Binds()...)
	args = append(args, "--unixsocket", a.Sock, "--unixsocketperm", a.SocketMode, "--save", "", "--appendonly", "no")
	if a.Local() {
		args = append(args, "--dir", a.Dir, "--daemonize", "no")
	}
	if a.TLSPort != "" {
		port, _ := strconv.Atoi(a.TLSPort)
		args = append(args, TLSArgs(port, a.TLS)...)
	}
	return args
}

// TLSArgs are the arguments that have a server also listen with TLS at
// tlsPort (on the addresses of its bind), with the run's certificate,
// clients not asked for one.
func TLSArgs(tlsPort int, tf supply.TLSFiles) []string {
	return []string{"--tls-port", strconv.Itoa(tlsPort), "--tls-cert-file", tf.Cert, "--tls-key-file", tf.Key,
		"--tls-ca-cert-file", tf.CA, "--tls-auth-clients", "no"}
}

// TLSConfig is TLSArgs as lines of a configuration file.
func TLSConfig(tlsPort int, tf supply.TLSFiles) string {
	args, conf := TLSArgs(tlsPort, tf), ""
	for i := 0; i+1 < len(args); i += 2 {
		conf += strings.TrimPrefix(args[i], "--") + " " + args[i+1] + "\n"
	}
	return conf
}
