package memcached

import (
	"strconv"
	"strings"
	"syscall"

	"github.com/dbsock/dbsock/supply"
)

// perTransport says in the report why two processes serve the target.
const perTransport = "two memcached instances, one on 127.0.0.1 TCP (-p, and its TLS listener for the tls path) and one on the Unix socket (-s), because memcached -s turns TCP off"

// description is memcached's server, whichever provider starts it: two
// instances started alike, one per transport (memcached -s turns TCP
// off), both taking the run's account through the text protocol's
// authentication (-Y, a file of user:password). Locally each is a
// process of its own, run as the memcache user when dbsock is root;
// in a container (memcached:1.6, or dbsock/memcached:1.6 without a
// registry, both running as memcache) one shell starts both, and the TCP
// instance serves TLS on a listener of its own when given the run's
// certificate. compose.yaml's memcached service comes from it too.
var description = supply.Description{
	Name:    name,
	Binary:  server,
	Install: "apt-get install " + server + ", or run scripts/install-deps.sh",
	Instances: []supply.Instance{
		{Name: "memcached-tcp", Serves: supply.ServesTCP, Args: func(a supply.At) []string {
			return append(append([]string{"-p", a.Port}, listen(a)...), flags(a, "-U", "0")...)
		}},
		{Name: "memcached-unix", Serves: supply.ServesUnix, Args: func(a supply.At) []string {
			return flags(a, "-s", a.Sock, "-a", a.SocketMode)
		}},
	},
	Socket:  supply.FixedSocket("memcached.sock"),
	Port:    11211,
	User:    User,
	Files:   []supply.File{{Name: "memcached.auth", Format: User + ":%s\n"}},
	Secrets: []string{"memcached-password"},
	TLS:     supply.TLSApart,
	OSUser:  "memcache",
	// Its SIGTERM only sets a flag that its main thread reads when its
	// event loop next wakes, which an idle memcached does once a second
	// (its clock tick), so each stop took up to a second, two per
	// restart; and all it does then is exit (no flush, nothing written:
	// it keeps its items in memory only), which SIGKILL does the same at
	// once.
	StopSignal:   syscall.SIGKILL,
	LocalServing: perTransport + "; started with the same flags and pinned alike",
	Note: "memcached serves a Unix socket only with TCP off (-s): two instances,\n" +
		"one per transport, started alike in one container, both taking the\n" +
		"run's account through the text protocol's authentication (-Y, a file\n" +
		"written from the secret inside the container).",
	Container: supply.Container{Image: "memcached:1.6", Offline: "dbsock/memcached:1.6", UID: 11211},
}

// recipe starts memcached as description says.
var recipe = description.Recipe()

// flags are an instance's arguments after those of its transport: the
// account's file, the memcache user (which memcached takes only when
// started as root), and its memory: 128 MiB of cache, items up to 32 MiB
// (--value-size goes up to 16 MiB; memcached takes items up to half its
// memory).
func flags(a supply.At, transport ...string) []string {
	return append(transport, "-u", "memcache", "-Y", a.File("memcached.auth"), "-m", "128", "-I", "32m")
}

// listen is where the TCP instance listens: its addresses, and with TLS
// its TLS listener too.
func listen(a supply.At) []string {
	if a.TLSPort == "" {
		return []string{"-l", a.Bind(",")}
	}
	port, _ := strconv.Atoi(a.TLSPort)
	return TLSArgs(a.TLS, port, a.Binds())
}

// TLSArgs turn on TLS with the run's certificate on a listener of its own
// at tlsPort on 127.0.0.1, and keep the listeners on addrs (at -p's port)
// plain ("notls:").
func TLSArgs(tf supply.TLSFiles, tlsPort int, addrs []string) []string {
	var ls []string
	for _, a := range addrs {
		if strings.Contains(a, ":") {
			a = "[" + a + "]"
		}
		ls = append(ls, "notls:"+a)
	}
	ls = append(ls, "127.0.0.1:"+strconv.Itoa(tlsPort))
	return []string{"-Z", "-o", "ssl_chain_cert=" + tf.Cert + ",ssl_key=" + tf.Key, "-l", strings.Join(ls, ",")}
}
