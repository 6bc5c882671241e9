//go:build !linux

package drivers

import (
	"context"
	"fmt"
	"net"
	"runtime"
)

// dialInNetns: network namespaces are Linux's.
func dialInNetns(_ context.Context, _ *net.Dialer, netns, _, addr string) (net.Conn, error) {
	return nil, fmt.Errorf("dial %s from the network namespace %s: %s has no network namespaces (the service and pod paths need a Linux engine)", addr, netns, runtime.GOOS)
}

// CanEnterNetns says whether this process may dial from another
// container's network namespace: never, here.
func CanEnterNetns() (bool, string) {
	return false, runtime.GOOS + " has no network namespaces"
}
