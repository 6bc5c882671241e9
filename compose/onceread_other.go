//go:build !linux

package compose

// removeOnceRead does nothing where there is no inotify: the files are
// removed once the server is ready.
func removeOnceRead([]string) (stop func()) { return func() {} }
