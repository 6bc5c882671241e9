// Package grpc is dbsock's driver for the standard gRPC health service
// (google.golang.org/grpc) served by dbsock's own child server: one op is
// one Check call on a kept HTTP/2 connection.
package grpc

import (
	"context"
	"fmt"
	"net"
	"time"

	gogrpc "google.golang.org/grpc"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"

	"github.com/dbsock/dbsock/drivers"
)

// Driver is the gRPC health-check driver. The zero value is ready to use.
type Driver struct{}

// New returns the gRPC driver.
func New() *Driver { return &Driver{} }

// Name implements drivers.Driver.
func (*Driver) Name() string { return name }

// Mode implements drivers.Driver.
func (*Driver) Mode() string { return "" }

// ValueSize implements drivers.Driver: the size of a serialized
// HealthCheckResponse{status: SERVING}.
func (*Driver) ValueSize() int { return 2 }

// Describe implements drivers.Driver.
func (*Driver) Describe() string {
	return "`grpc.health.v1.Health/Check` on a kept HTTP/2 connection to dbsock's gRPC server in a child process"
}

// ConnectPhase implements drivers.Driver.
func (*Driver) ConnectPhase() string {
	return "connect and the HTTP/2 handshake, until the channel is ready"
}

// Seed implements drivers.Driver; the health service has nothing to seed.
func (*Driver) Seed(context.Context, drivers.Endpoint) error { return nil }

// Info implements drivers.Driver.
func (*Driver) Info(context.Context, drivers.Endpoint) (drivers.ServerInfo, error) {
	return drivers.ServerInfo{Product: "dbsock gRPC health server", Version: gogrpc.Version, Detail: "grpc-go " + gogrpc.Version}, nil
}

// Open implements drivers.Driver: a client connection on exactly the
// endpoint's transport, connected before it returns.
func (*Driver) Open(ctx context.Context, ep drivers.Endpoint) (drivers.Conn, error) {
	dial := func(ctx context.Context, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, ep.Transport.Network(), ep.Address)
	}
	cc, err := gogrpc.NewClient("passthrough:///dbsock", gogrpc.WithTransportCredentials(insecure.NewCredentials()), gogrpc.WithContextDialer(dial))
	if err != nil {
		return nil, fmt.Errorf("configure gRPC client for %s: %w", ep, err)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	cc.Connect()
	for s := cc.GetState(); s != connectivity.Ready; s = cc.GetState() {
		if !cc.WaitForStateChange(ctx, s) {
			cc.Close()
			return nil, fmt.Errorf("connect to gRPC server over %s: channel %s: %w", ep, s, ctx.Err())
		}
	}
	return &Conn{cc: cc, client: healthpb.NewHealthClient(cc), req: &healthpb.HealthCheckRequest{}}, nil
}

// Conn is one gRPC client connection.
type Conn struct {
	cc     *gogrpc.ClientConn
	client healthpb.HealthClient
	req    *healthpb.HealthCheckRequest
}

// Do implements drivers.Conn: one health Check.
func (c *Conn) Do(ctx context.Context) error {
	resp, err := c.client.Check(ctx, c.req)
	if err == nil && resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		return fmt.Errorf("gRPC health status %s, want SERVING", resp.GetStatus())
	}
	return err
}

// Verify implements drivers.Conn with the network the server saw, which it
// returns in the reply's header metadata.
func (c *Conn) Verify(ctx context.Context) (drivers.Verification, error) {
	var md metadata.MD
	if _, err := c.client.Check(ctx, c.req, gogrpc.Header(&md)); err != nil {
		return drivers.Verification{}, fmt.Errorf("gRPC health check: %w", err)
	}
	v := md.Get(drivers.NetworkHeader)
	if len(v) != 1 {
		return drivers.Verification{}, fmt.Errorf("the gRPC server's reply has no %s metadata", drivers.NetworkHeader)
	}
	return drivers.Verification{Transport: drivers.Transport(v[0]), Evidence: "gRPC server accepted the call on " + v[0]}, nil
}

// Close implements drivers.Conn.
func (c *Conn) Close() error { return c.cc.Close() }
