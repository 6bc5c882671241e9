//go:build !linux

package supply

// RemoveOnceRead does nothing where there is no inotify: the files are
// removed once the server is ready.
func RemoveOnceRead([]string) (stop func()) { return func() {} }
