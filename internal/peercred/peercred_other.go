//go:build !linux

package peercred

import (
	"errors"
	"net"
)

// PeerPID is 0: the client's process is read on Linux only.
func PeerPID(net.Conn) int { return 0 }

// ListenerPID is read on Linux only.
func ListenerPID(string) (int, error) { return 0, errors.ErrUnsupported }

// Name is read on Linux only.
func Name(int) string { return "" }
