package http

// The server behind dbsock's http target, run in a child process (package
// child): GET / answers "ok" with the network the request arrived on in
// drivers.NetworkHeader.

import (
	"context"
	"errors"
	"net"
	"net/http"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/supply/child"
)

func newServer() child.Server {
	s := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			network, _ := r.Context().Value(networkKey{}).(string)
			w.Header().Set(drivers.NetworkHeader, network)
			w.Header().Set("Content-Type", "text/plain")
			_, _ = w.Write([]byte("ok"))
		}),
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			return context.WithValue(ctx, networkKey{}, drivers.NetworkOf(c.LocalAddr()))
		},
	}
	serve := func(l net.Listener) error {
		if err := s.Serve(l); !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	}
	return child.Server{Serve: serve, Stop: func() { s.Close() }}
}

type networkKey struct{}
