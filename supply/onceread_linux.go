package supply

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"sync"

	"golang.org/x/sys/unix"
)

// RemoveOnceRead removes each of paths (files in one directory) as soon
// as a process, a container's included (inotify sees the inode, whatever
// the mount), has opened it for reading and closed it: a password handed
// to a server in a file is then on disk only until the server's
// entrypoint has read it, not until the server is ready. stop ends the
// watch; what was not read is the caller's to remove. Where inotify is not
// to be had, it does nothing.
func RemoveOnceRead(paths []string) (stop func()) {
	if len(paths) == 0 {
		return func() {}
	}
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return func() {}
	}
	f := os.NewFile(uintptr(fd), "inotify") // non-blocking: its Read waits in the poller, and Close ends it
	watched := map[string]bool{}
	for _, p := range paths {
		watched[filepath.Base(p)] = true
	}
	dir := filepath.Dir(paths[0])
	if _, err := unix.InotifyAddWatch(fd, dir, unix.IN_CLOSE_NOWRITE); err != nil {
		f.Close()
		return func() {}
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		buf := make([]byte, 64*(unix.SizeofInotifyEvent+unix.NAME_MAX+1))
		for {
			n, err := f.Read(buf)
			if err != nil {
				return
			}
			for off := 0; off+unix.SizeofInotifyEvent <= n; {
				// struct inotify_event: wd, mask, cookie, len, then name.
				nameLen := binary.NativeEndian.Uint32(buf[off+12 : off+16])
				nameEnd := off + unix.SizeofInotifyEvent + int(nameLen)
				if nameEnd > n {
					break
				}
				name := cString(buf[off+unix.SizeofInotifyEvent : nameEnd])
				if watched[name] {
					os.Remove(filepath.Join(dir, name))
				}
				off = nameEnd
			}
		}
	}()
	return func() {
		f.Close()
		wg.Wait()
	}
}

// cString is b up to its first NUL.
func cString(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}
