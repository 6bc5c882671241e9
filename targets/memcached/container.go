package memcached

import (
	"strconv"
	"strings"

	"github.com/dbsock/dbsock/compose"
)

// recipe starts two memcached instances locally, and in a container from
// memcached:1.6 (dbsock/memcached:1.6 without a registry), both instances
// in the one container.
var recipe = compose.Recipe{Local: localServer, Container: &compose.Container{Image: "memcached:1.6", Offline: "dbsock/memcached:1.6", UID: 11211, Spec: container}}

// container runs both instances in one container: the official image's
// entrypoint runs the command as given, as its memcache user; dbsock's
// runs it as root, where -u memcache takes effect.
func container(port int, _, bind string) (compose.ContainerSpec, error) {
	flags := strings.Join(append([]string{"-u", "memcache"}, memory...), " ")
	script := "memcached -p " + strconv.Itoa(port) + " -l " + bind + " -U 0 " + flags + " & " +
		"exec memcached -s /sock/memcached.sock -a 0777 " + flags
	return compose.ContainerSpec{Cmd: []string{"sh", "-c", script}, Socket: "memcached.sock"}, nil
}
