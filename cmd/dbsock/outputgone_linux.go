package main

import (
	"os"

	"golang.org/x/sys/unix"
)

// outputGone says whether out or errOut is a pipe or socket whose reader
// went away: poll reports an error or a hang-up on it.
func outputGone(files ...*os.File) bool {
	for _, f := range files {
		fds := []unix.PollFd{{Fd: int32(f.Fd())}}
		if n, err := unix.Poll(fds, 0); err == nil && n > 0 && fds[0].Revents&(unix.POLLERR|unix.POLLHUP) != 0 {
			return true
		}
	}
	return false
}
