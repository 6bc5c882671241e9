package compose

import "testing"

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
