// Package libhook lets package dbsocktest open an op the way package
// dbsock's Compare does (through Dial, verified on the server side)
// without a public API for it: package dbsock sets Open when it is
// initialized, and dbsocktest imports dbsock, so Open is set before any
// test runs.
package libhook

import (
	"context"

	"github.com/dbsock/dbsock/drivers"
)

// Opener is dbsock.Opener's signature.
type Opener = func(ctx context.Context, ep drivers.Endpoint) (do func(context.Context) error, close func() error, err error)

// Open opens open over ep of a server of target, checks that the op dialed
// ep through dbsock.Dial and that the server sees ep's transport, and
// returns the op as a connection (a drivers.Aborter too: Abort ends an op
// blocked on a server that stopped answering) and the server's evidence.
var Open func(ctx context.Context, target string, ep drivers.Endpoint, open Opener) (conn drivers.Conn, evidence string, err error)
