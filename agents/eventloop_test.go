package agents_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/dbsock/dbsock/agents"
	"github.com/dbsock/dbsock/drivers"
)

// TestEventLoopShutsATimedOutConnection: in the C stack's event loop, an
// op left unanswered past the op timeout fails, and its connection is
// shut: a server (here a fake Redis) that answers it late must not have
// that late answer read as the next op's. Every op after the timeout, in
// the load and in a block on the same connection, fails; none succeeds
// on a reply that was another key's.
func TestEventLoopShutsATimedOutConnection(t *testing.T) {
	if err := agents.Installed("."); err != nil {
		needStack(t, err)
	}
	spec, err := agents.ForModel(".", "c", "redis", "redis", "hiredis", "event-loop")
	if err != nil {
		needStack(t, err)
	}
	l, sock := listenUnix(t, "evhang", "redis.sock")
	const late = 3 // the GET answered late (counting from 1)
	go lateRedis(l, late, 3*limits.OpTimeout)

	a, err := agents.Start(context.Background(), spec, limits)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	o, err := agents.NewOpen("c1", "redis", drivers.Endpoint{Transport: drivers.Unix, Address: sock}, agents.Token("c1"), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Open(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	keys := []any{"k1", "k2", "k3", "k4", "k5", "k6"}
	res, err := a.Load(context.Background(), agents.Load{IDs: []string{"c1"}, Keys: [][]any{keys}, ValueLength: 4})
	if err != nil {
		t.Fatal(err)
	}
	r := res.Results[0]
	if len(r.Ns) != len(keys) || len(r.Errors) != len(keys)-late+1 || r.Errors[0].Index != late-1 ||
		!strings.Contains(r.Errors[0].Message, "no answer within") || !strings.Contains(r.Errors[1].Message, "unanswered") {
		t.Fatalf("the load: %d ops, errors %+v; want %d ops, op %d failed for want of an answer and every op after it", len(r.Ns), r.Errors, len(keys), late-1)
	}
	time.Sleep(4 * limits.OpTimeout) // the late answer has come by now
	b, err := a.Block(context.Background(), agents.Block{ID: "c1", Keys: keys[:2], ValueLength: 4})
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Errors) != len(b.Ns) {
		t.Fatalf("a block after the timeout on the same connection: %d ops, %d failed (%+v); want every op failed: the connection was shut", len(b.Ns), len(b.Errors), b.Errors)
	}
}

// lateRedis serves one connection on l as Redis would, to hiredis: +OK to
// AUTH and CLIENT, a 4-byte value to GET, but the late-th GET's answer
// only after delay.
func lateRedis(l net.Listener, late int, delay time.Duration) {
	c, err := l.Accept()
	if err != nil {
		return
	}
	defer c.Close()
	rd := bufio.NewReader(c)
	gets := 0
	for range 1000 {
		args, err := readCommand(rd)
		if err != nil {
			return
		}
		if strings.EqualFold(args[0], "GET") {
			if gets++; gets == late {
				time.Sleep(delay)
			}
			fmt.Fprintf(c, "$4\r\nv%03d\r\n", gets)
			continue
		}
		c.Write([]byte("+OK\r\n"))
	}
}

// readCommand reads one RESP array of bulk strings (at most 8 of 64
// bytes each).
func readCommand(rd *bufio.Reader) ([]string, error) {
	var n int
	if _, err := fmt.Fscanf(rd, "*%d\r\n", &n); err != nil || n < 1 || n > 8 {
		return nil, fmt.Errorf("not a command: %v", err)
	}
	args := make([]string, n)
	for i := range args {
		var size int
		if _, err := fmt.Fscanf(rd, "$%d\r\n", &size); err != nil || size < 0 || size > 64 {
			return nil, fmt.Errorf("not a bulk string: %v", err)
		}
		b := make([]byte, size+2)
		if _, err := io.ReadFull(rd, b); err != nil {
			return nil, err
		}
		args[i] = string(b[:size])
	}
	return args, nil
}
