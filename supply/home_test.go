package supply

import (
	"slices"
	"strings"
	"testing"
)

// TestHomeHostPath: a path in the job's container is found on the host
// through the container's bind mounts and volumes, the deepest mount
// first; a path in the container's own filesystem, a tmpfs, or a mount
// that merely shares a prefix, is not.
func TestHomeHostPath(t *testing.T) {
	h := &Home{Mounts: []HomeMount{
		{Type: "bind", Source: "/var/run/docker.sock", Destination: "/var/run/docker.sock"},
		{Type: "bind", Source: "/srv/ci", Destination: "/builds"},
		{Type: "bind", Source: "/srv/cache", Destination: "/builds/cache"},
		{Type: "volume", Source: "/var/lib/docker/volumes/tmp/_data", Destination: "/tmp"},
		{Type: "tmpfs", Destination: "/run/secrets"},
	}}
	for _, c := range []struct {
		in, want string
		ok       bool
	}{
		{"/builds/dbsock-1/redis-2", "/srv/ci/dbsock-1/redis-2", true},
		{"/builds", "/srv/ci", true},
		{"/builds/cache/dbsock-1", "/srv/cache/dbsock-1", true},
		{"/tmp/dbsock-1/", "/var/lib/docker/volumes/tmp/_data/dbsock-1", true},
		{"/buildsx/dbsock-1", "", false},
		{"/run/secrets/dbsock-1", "", false},
		{"/var/tmp/dbsock-1", "", false},
	} {
		got, ok := h.HostPath(c.in)
		if got != c.want || ok != c.ok {
			t.Errorf("HostPath(%q) = %q, %v; want %q, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

// TestNoHomeOnTheHost: on the host (these tests run there) dbsock is in
// no container, and its owner records name none.
func TestNoHomeOnTheHost(t *testing.T) {
	if ids := homeCandidates(); len(ids) > 0 {
		t.Skipf("this test runs in container %.12s", ids[0])
	}
	if h := HomeOn(t.Context(), DockerSocket()); h != nil {
		t.Errorf("HomeOn on the host = %+v", h)
	}
	if o := OwnerOn(t.Context(), DockerSocket()); o.Container != "" {
		t.Errorf("OwnerOn on the host names container %s", o.Container)
	}
}

// TestHomeCandidatesFromTheContainersOwnFiles: the container's ID is read
// from the files mounted at /etc/hostname and the like, or its cgroup,
// never from the other containers' mounts that the host's mountinfo
// lists.
func TestHomeCandidatesFromTheContainersOwnFiles(t *testing.T) {
	id := strings.Repeat("3f", 32)
	other := strings.Repeat("a1", 32)
	mount := func(root, at string) string {
		return "266 248 254:0 " + root + " " + at + " rw,relatime - ext4 /dev/vda rw\n"
	}
	for _, c := range []struct {
		name, mountinfo, cgroup string
		want                    []string
	}{
		{"docker's own files", mount("/var/lib/docker/containers/"+id+"/resolv.conf", "/etc/resolv.conf") + mount("/var/lib/docker/containers/"+id+"/hostname", "/etc/hostname"), "", []string{id}},
		{"podman's", mount("/containers/storage/overlay-containers/"+id+"/userdata/hosts", "/etc/hosts"), "", []string{id}},
		{"cgroup v1", "", "9:name=systemd:/docker/" + id + "\n8:pids:/docker/" + id, []string{id}},
		{"systemd's scope", "", "0::/system.slice/docker-" + id + ".scope", []string{id}},
		{"the host: other containers' mounts", mount("/", "/var/lib/docker/containers/"+other+"/mounts/shm") + mount("/", "/var/lib/docker/overlay2/"+other+"/merged"),
			"0::/user.slice/user-1000.slice/session-2.scope", nil},
	} {
		if got := candidatesIn(c.mountinfo, c.cgroup); !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
