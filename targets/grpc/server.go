package grpc

// The server behind dbsock's grpc target, run in a child process (package
// child): the standard health service, every reply carrying the network
// the call arrived on in its header metadata.

import (
	"context"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/supply/child"
)

func newServer() child.Server {
	s := grpc.NewServer(grpc.UnaryInterceptor(func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		if p, ok := peer.FromContext(ctx); ok && p.LocalAddr != nil {
			_ = grpc.SetHeader(ctx, metadata.Pairs(strings.ToLower(drivers.NetworkHeader), drivers.NetworkOf(p.LocalAddr)))
		}
		return handler(ctx, req)
	}))
	h := health.NewServer()
	h.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	healthpb.RegisterHealthServer(s, h)
	return child.Server{Serve: s.Serve, Stop: s.Stop}
}
