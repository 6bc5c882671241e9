// Package child runs dbsock's own servers (echo, gRPC health, HTTP) in a
// child process, so that their work never shares the measuring client's Go
// runtime. The parent re-executes its own binary with Env set; main (and
// TestMain of tests that start such servers) calls MaybeRun first thing.
package child

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"

	"github.com/dbsock/dbsock/drivers"
)

// Env selects the server a child runs: "KIND TCPADDR UNIXPATH", KIND one of
// Kinds.
const Env = "DBSOCK_CHILD_SERVER"

// Kinds of child servers.
const (
	Echo  = "echo"
	Floor = "floor"
	GRPC  = "grpc"
	HTTP  = "http"
)

// Spec returns the Env value for a child serving kind on tcpAddr and unixPath.
func Spec(kind, tcpAddr, unixPath string) string { return kind + " " + tcpAddr + " " + unixPath }

// MaybeRun runs the server and exits when this process was started as a
// child server (Env set); otherwise it returns at once.
func MaybeRun() {
	spec, ok := os.LookupEnv(Env)
	if !ok {
		return
	}
	f := strings.Fields(spec)
	if len(f) != 3 {
		fail(fmt.Errorf("%s=%q is not KIND TCPADDR UNIXPATH", Env, spec))
	}
	tcp, unix, err := listen(f[1], f[2])
	if err != nil {
		fail(err)
	}
	var serve func(net.Listener) error
	var stop func()
	switch f[0] {
	case Echo:
		serve, stop = serveEcho, func() { tcp.Close(); unix.Close() }
	case Floor:
		serve, stop = serveFloor, func() { tcp.Close(); unix.Close() }
	case GRPC:
		s := grpcServer()
		serve, stop = s.Serve, s.Stop
	case HTTP:
		s := httpServer()
		serve, stop = s.Serve, func() { s.Close() }
	default:
		fail(fmt.Errorf("unknown child server kind %q", f[0]))
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		<-sig
		stop()
		os.Exit(0)
	}()
	errc := make(chan error, 2)
	go func() { errc <- serve(tcp) }()
	go func() { errc <- serve(unix) }()
	if err := <-errc; err != nil && !errors.Is(err, net.ErrClosed) && !errors.Is(err, http.ErrServerClosed) && !errors.Is(err, grpc.ErrServerStopped) {
		fail(err)
	}
	select {}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "dbsock child server:", err)
	os.Exit(1)
}

// grpcServer serves the standard health service; every reply carries the
// network the call arrived on, in its header metadata.
func grpcServer() *grpc.Server {
	s := grpc.NewServer(grpc.UnaryInterceptor(func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		if p, ok := peer.FromContext(ctx); ok && p.LocalAddr != nil {
			_ = grpc.SetHeader(ctx, metadata.Pairs(strings.ToLower(drivers.NetworkHeader), p.LocalAddr.Network()))
		}
		return handler(ctx, req)
	}))
	h := health.NewServer()
	h.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	healthpb.RegisterHealthServer(s, h)
	return s
}

// httpServer answers GET / with "ok" and the network in drivers.NetworkHeader.
func httpServer() *http.Server {
	return &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			network, _ := r.Context().Value(networkKey{}).(string)
			w.Header().Set(drivers.NetworkHeader, network)
			w.Header().Set("Content-Type", "text/plain")
			_, _ = w.Write([]byte("ok"))
		}),
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			return withNetwork(ctx, c.LocalAddr().Network())
		},
	}
}

type networkKey struct{}

func withNetwork(ctx context.Context, network string) context.Context {
	return context.WithValue(ctx, networkKey{}, network)
}
