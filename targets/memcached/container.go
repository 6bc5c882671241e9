package memcached

import (
	"path/filepath"
	"strconv"
	"strings"

	"github.com/dbsock/dbsock/supply"
)

// recipe starts two memcached instances locally, and in a container from
// memcached:1.6 (dbsock/memcached:1.6 without a registry), both instances
// in the one container.
var recipe = supply.Recipe{Local: localServer, Container: &supply.Container{Image: "memcached:1.6", Offline: "dbsock/memcached:1.6", UID: 11211, Spec: container}}

// container runs both instances in one container: the official image's
// entrypoint runs the command as given, as its memcache user; dbsock's
// runs it as root, where -u memcache takes effect.
// Both take the run's account through an auth file in the private socket
// directory (-Y), removed once they are up and written back for a restart.
// With the run's TLS files the TCP instance also serves TLS on a listener
// of its own.
func container(sf supply.SpecFor) (supply.ContainerSpec, error) {
	port, dir, bind := sf.Port, sf.Dir, sf.Bind
	pw, err := supply.RandomPassword()
	if err != nil {
		return supply.ContainerSpec{}, err
	}
	if err := supply.WriteServerFile(filepath.Join(dir, "memcached.auth"), []byte(User+":"+pw+"\n"), 0o644); err != nil {
		return supply.ContainerSpec{}, err
	}
	flags := strings.Join(append([]string{"-u", "memcache", "-Y", "/sock/memcached.auth"}, memory...), " ")
	listen, tlsPort := "-l "+bind, 0
	if sf.TLS.Cert != "" {
		listen, tlsPort = strings.Join(TLSArgs(sf.TLS, sf.TLSPort, strings.Split(bind, ",")), " "), sf.TLSPort
	}
	script := "memcached -p " + strconv.Itoa(port) + " " + listen + " -U 0 " + flags + " & " +
		"exec memcached -s /sock/memcached.sock -a 0777 " + flags
	return supply.ContainerSpec{Cmd: []string{"sh", "-c", script}, Socket: "memcached.sock", Config: "memcached.auth",
		User: User, Password: pw, TLSPort: tlsPort}, nil
}
