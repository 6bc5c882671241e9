package results

import "testing"

// TestSyscallsBelowOneInTwoOpsAreNotCounted: a side that counted fewer
// read and write calls than one in two ops moved its bytes with calls
// /proc/PID/io does not count (a C agent's libpq: recv and send, its
// protocol's 0.01 per op on stdin and stdout): no per-op figure, never
// that figure as if it were the socket's.
func TestSyscallsBelowOneInTwoOpsAreNotCounted(t *testing.T) {
	server, sns, scsw := int64(20000), int64(1e8), int64(10000)
	for _, tc := range []struct {
		client int64
		want   bool
	}{{0, false}, {100, false}, {4999, false}, {5000, true}, {30000, true}} {
		c := NewCPU(10000, 1e8, 10000, &sns, &scsw, "test").WithSyscalls(tc.client, &server)
		got, srv := c.SyscallsCounted()
		if got != tc.want || (c.ClientSyscallsPerOp != nil) != tc.want || !srv {
			t.Errorf("client %d calls over 10000 ops: counted %v (per op %v), server counted %v; want client %v, server true", tc.client, got, c.ClientSyscallsPerOp, srv, tc.want)
		}
	}
}
