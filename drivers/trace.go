package drivers

import (
	"context"
	"crypto/tls"
	"net"
)

// Trace receives the moments one connection passes while a driver opens
// it, for the connect scenario's phases: drivers say when, package
// scenarios reads the clock. Either func may be nil.
type Trace struct {
	// Dialed: the socket is connected (TCP's handshake, or the Unix
	// connect).
	Dialed func()
	// Secured: the TLS handshake is done (the tls path only).
	Secured func()
}

type traceKey struct{}

// WithTrace is ctx carrying tr to the driver's dialer.
func WithTrace(ctx context.Context, tr *Trace) context.Context {
	return context.WithValue(ctx, traceKey{}, tr)
}

// TraceFrom is the Trace ctx carries, or nil; its methods take a nil one.
func TraceFrom(ctx context.Context) *Trace {
	tr, _ := ctx.Value(traceKey{}).(*Trace)
	return tr
}

// Dial says that the socket is connected.
func (t *Trace) Dial() {
	if t != nil && t.Dialed != nil {
		t.Dialed()
	}
}

// Secure says that the TLS handshake is done.
func (t *Trace) Secure() {
	if t != nil && t.Secured != nil {
		t.Secured()
	}
}

// TracedTLS is cfg for a client library that runs the TLS handshake
// itself: with a trace in ctx, a copy that says when each handshake is
// done (Go calls VerifyConnection at its end, after the usual checks);
// otherwise cfg itself. nil stays nil.
func TracedTLS(ctx context.Context, cfg *tls.Config) *tls.Config {
	tr := TraceFrom(ctx)
	if cfg == nil || tr == nil || tr.Secured == nil {
		return cfg
	}
	return onHandshake(cfg, func(tls.ConnectionState) { tr.Secure() })
}

// KeepTrace is dial for a client library that dials with a context of its
// own (in the background, or without the caller's values): each dial
// carries the Trace of ctx, the context the connection was opened with.
func KeepTrace(ctx context.Context, dial func(context.Context, string, string) (net.Conn, error)) func(context.Context, string, string) (net.Conn, error) {
	tr := TraceFrom(ctx)
	if tr == nil {
		return dial
	}
	return func(dctx context.Context, network, addr string) (net.Conn, error) {
		return dial(WithTrace(dctx, tr), network, addr)
	}
}
