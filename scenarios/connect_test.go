package scenarios

import (
	"context"
	"testing"
	"time"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/results"
)

// TestConnectParts: the connect phase splits where the driver says its
// socket connected and its TLS handshake ended, the parts adding up to
// the whole; a TLS path whose driver does not say when its handshake
// ended is not split, nor is a driver that says nothing.
func TestConnectParts(t *testing.T) {
	step := func() { time.Sleep(2 * time.Millisecond) }
	opener := func(dial, secure bool) Opener {
		return func(ctx context.Context) (drivers.Conn, error) {
			tr := drivers.TraceFrom(ctx)
			step()
			if dial {
				tr.Dial()
			}
			step()
			if secure {
				tr.Secure()
			}
			step()
			return nopConn{}, nil
		}
	}
	for _, tt := range []struct {
		name                string
		dial, secure, tlsEP bool
		wantDial, wantTLS   int64
	}{
		{"tls path", true, true, true, 1, 1},
		{"tcp path", true, false, false, 1, 0},
		{"tls path, handshake unsaid", true, false, true, 0, 0},
		{"driver says nothing", false, false, false, 0, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			op := &connectOp{ctx: context.Background(), open: opener(tt.dial, tt.secure), secure: tt.tlsEP,
				connect: results.NewHistogram(), query: results.NewHistogram(),
				dial: results.NewHistogram(), tls: results.NewHistogram(), login: results.NewHistogram()}
			if err := op.Do(context.Background()); err != nil {
				t.Fatal(err)
			}
			if got := op.dial.TotalCount(); got != tt.wantDial {
				t.Fatalf("dial parts %d, want %d", got, tt.wantDial)
			}
			if got := op.tls.TotalCount(); got != tt.wantTLS {
				t.Fatalf("tls parts %d, want %d", got, tt.wantTLS)
			}
			if tt.wantDial == 0 {
				return
			}
			sum := op.dial.Max() + op.tls.Max() + op.login.Max()
			whole := op.connect.Max()
			if d := sum - whole; d > whole/100 || -d > whole/100 {
				t.Errorf("parts add up to %d ns, connect %d ns", sum, whole)
			}
			if op.dial.Max() < int64(time.Millisecond) || op.login.Max() < int64(time.Millisecond) {
				t.Errorf("dial %d ns, login %d ns: each took a sleep of 2 ms", op.dial.Max(), op.login.Max())
			}
		})
	}
}
