package supply

import (
	"context"
	"net"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/dbsock/dbsock/internal/testutil"
)

// portTestServer is a real server (redis-server) described the way a
// target describes it: its port and socket from At.
var portTestServer = Description{
	Name:    "redis",
	Binary:  "redis-server",
	Install: "apt-get install redis-server",
	Instances: []Instance{{Name: "redis-server", Args: func(a At) []string {
		return append(append([]string{"--port", a.Port, "--bind"}, a.Binds()...),
			"--unixsocket", a.Sock, "--save", "", "--appendonly", "no", "--dir", a.Dir, "--daemonize", "no")
	}}},
	Socket:     FixedSocket("redis.sock"),
	OSUser:     "redis",
	StopSignal: syscall.SIGKILL,
}

// takePorts makes beforeStart hold each prepared instance's port (on
// 127.0.0.1, as another process's connection would) for its first taken
// starts, and counts the starts.
func takePorts(t *testing.T, taken int) (starts *int, ports *[]int) {
	starts, ports = new(int), new([]int)
	beforeStart = func(ls *LocalServer) {
		*starts++
		*ports = append(*ports, ls.Port)
		if *starts > taken {
			return
		}
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(ls.Port))
		if err != nil {
			t.Fatalf("hold port %d: %v", ls.Port, err)
		}
		t.Cleanup(func() { l.Close() })
	}
	t.Cleanup(func() { beforeStart = nil })
	return starts, ports
}

func TestServerStartsAgainWhenItsPortWasTaken(t *testing.T) {
	testutil.NeedAny(t, "redis-server")
	starts, ports := takePorts(t, 1)
	l := NewLocal()
	defer l.Close()
	srv, err := portTestServer.startLocal(context.Background(), l, "redis")
	if err != nil {
		t.Fatalf("start with its first port taken: %v", err)
	}
	defer srv.Stop(context.Background())
	if *starts != 2 {
		t.Fatalf("started %d times, want 2 (once on the taken port, once more)", *starts)
	}
	if got := srv.TCP().Address; got != "127.0.0.1:"+strconv.Itoa((*ports)[1]) || (*ports)[0] == (*ports)[1] {
		t.Fatalf("server at %s after ports %v: want the second pick", got, *ports)
	}
	c, err := net.Dial("tcp", srv.TCP().Address)
	if err != nil {
		t.Fatalf("dial the server started again: %v", err)
	}
	c.Close()
}

func TestServerWhosePortsAreAlwaysTakenFails(t *testing.T) {
	testutil.NeedAny(t, "redis-server")
	starts, _ := takePorts(t, portTries)
	l := NewLocal()
	defer l.Close()
	_, err := portTestServer.startLocal(context.Background(), l, "redis")
	if err == nil || !portTaken(err) {
		t.Fatalf("got %v, want the server's own words on a port in use", err)
	}
	if *starts != portTries {
		t.Fatalf("started %d times, want %d", *starts, portTries)
	}
	if left := testutil.Children(t); len(left) != 0 {
		t.Fatalf("processes left running: %v", left)
	}
}

func TestOtherStartFailuresAreNotTriedAgain(t *testing.T) {
	if portTaken(syscall.ECONNREFUSED) || !portTaken(errorString("bind: Address already in use")) {
		t.Fatal("portTaken reads the wrong words")
	}
	if !strings.Contains(syscall.EADDRINUSE.Error(), "in use") {
		t.Fatalf("EADDRINUSE says %q here", syscall.EADDRINUSE.Error())
	}
}

type errorString string

func (e errorString) Error() string { return string(e) }
