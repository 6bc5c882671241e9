package memcached

import (
	"os"
	"path/filepath"
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
// Both take the run's account through an auth file in the private socket
// directory (-Y), removed once they are up and written back for a restart.
func container(port int, dir, bind string) (compose.ContainerSpec, error) {
	pw, err := compose.RandomPassword()
	if err != nil {
		return compose.ContainerSpec{}, err
	}
	if err := os.WriteFile(filepath.Join(dir, "memcached.auth"), []byte(User+":"+pw+"\n"), 0o644); err != nil {
		return compose.ContainerSpec{}, err
	}
	flags := strings.Join(append([]string{"-u", "memcache", "-Y", "/sock/memcached.auth"}, memory...), " ")
	script := "memcached -p " + strconv.Itoa(port) + " -l " + bind + " -U 0 " + flags + " & " +
		"exec memcached -s /sock/memcached.sock -a 0777 " + flags
	return compose.ContainerSpec{Cmd: []string{"sh", "-c", script}, Socket: "memcached.sock", Config: "memcached.auth",
		User: User, Password: pw}, nil
}
