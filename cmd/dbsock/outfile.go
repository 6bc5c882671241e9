package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// How a report path is written.
const (
	// writeReplace: a regular file (or none yet) is written to a temp file
	// beside it and renamed into place, so it is never left half-written.
	writeReplace = iota
	// writeThrough: a FIFO or a device is opened and written as it is;
	// renaming over it would replace it with a regular file.
	writeThrough
	// writeStdout and writeStderr: /dev/stdout, /dev/stderr and
	// /proc/self/fd/1 or 2 go to dbsock's own streams.
	writeStdout
	writeStderr
)

// outFile is a checked report destination: what the user named, the real
// path after following symlinks, and how it is written.
type outFile struct {
	name string
	path string
	how  int
}

// checkOutFile decides, before anything runs, how path will be written,
// and refuses (as a usage error) what cannot be: a directory, a socket, a
// missing or read-only directory, a file or device dbsock may not write.
func checkOutFile(flag, path string) (outFile, error) {
	f := outFile{name: path, path: path}
	switch filepath.Clean(path) {
	case "/dev/stdout", "/proc/self/fd/1", "/dev/fd/1":
		f.how = writeStdout
		return f, nil
	case "/dev/stderr", "/proc/self/fd/2", "/dev/fd/2":
		f.how = writeStderr
		return f, nil
	}
	fi, err := f.resolve(flag)
	switch {
	case err != nil:
		return f, err
	case fi == nil:
		return f, checkDir(flag, path, filepath.Dir(f.path))
	case fi.IsDir():
		return f, usagef("%s %q is a directory; name a file in it, e.g. %s", flag, path, filepath.Join(path, "report.json"))
	case fi.Mode()&fs.ModeSocket != 0:
		return f, usagef("%s %q is a Unix socket, not a file a report can be written to", flag, path)
	case fi.Mode().IsRegular():
		if err := unix.Access(f.path, unix.W_OK); err != nil {
			return f, usagef("%s %q: this user may not write it (%v)", flag, path, err)
		}
		return f, checkDir(flag, path, filepath.Dir(f.path))
	}
	// A FIFO or a device: written through, never renamed over.
	if err := unix.Access(f.path, unix.W_OK); err != nil {
		return f, usagef("%s %q: this user may not write it (%v)", flag, path, err)
	}
	f.how = writeThrough
	return f, nil
}

// resolve follows f's symlinks into f.path and stats the result: nil
// FileInfo (and no error) when nothing is there yet.
func (f *outFile) resolve(flag string) (fs.FileInfo, error) {
	real, err := followLinks(f.name)
	if err != nil {
		return nil, usagef("%s %q: %v", flag, f.name, err)
	}
	f.path = real
	fi, err := os.Stat(real)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case err != nil:
		return nil, usagef("%s %q: %v", flag, f.name, err)
	}
	return fi, nil
}

// followLinks resolves path's symlinks; a dangling link resolves to the
// file it names, which will be created.
func followLinks(path string) (string, error) {
	path, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	for range 40 {
		fi, err := os.Lstat(path)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			real, err := filepath.EvalSymlinks(filepath.Dir(path))
			if err != nil {
				return path, nil // a missing directory: checkDir says so
			}
			return filepath.Join(real, filepath.Base(path)), nil
		}
		target, err := os.Readlink(path)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(path), target)
		}
		path = target
	}
	return "", fmt.Errorf("too many levels of symbolic links")
}

// checkDir checks that dir exists and that a file can be made in it.
func checkDir(flag, path, dir string) error {
	fi, err := os.Stat(dir)
	if err != nil || !fi.IsDir() {
		return usagef("%s %q: directory %q does not exist; create it first", flag, path, dir)
	}
	probe, err := os.CreateTemp(dir, ".dbsock-probe-*")
	if err != nil {
		return usagef("%s %q: cannot create files in %q (%v); choose a writable directory", flag, path, dir, errors.Unwrap(err))
	}
	probe.Close()
	os.Remove(probe.Name())
	return nil
}

// write puts data where f says. A FIFO without a reader is waited for
// until ctx ends (a Ctrl-C), never past it.
func (f outFile) write(ctx context.Context, data []byte, stdout, stderr io.Writer) error {
	var err error
	switch f.how {
	case writeStdout:
		_, err = stdout.Write(data)
	case writeStderr:
		_, err = stderr.Write(data)
	case writeThrough:
		var w *os.File
		if w, err = openThrough(ctx, f.path, stderr); err == nil {
			_, err = w.Write(data)
			err = errors.Join(err, w.Close())
		}
	default:
		err = replaceFile(f.path, data)
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", f.name, err)
	}
	return nil
}

// openThrough opens a FIFO or device for writing. Opening a FIFO blocks
// until a reader comes, in the kernel, where no signal reaches: it is
// opened without blocking, and tried again every 50 ms until a reader
// comes or ctx ends.
func openThrough(ctx context.Context, path string, stderr io.Writer) (*os.File, error) {
	said := false
	for {
		fd, err := syscall.Open(path, syscall.O_WRONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
		if err == nil {
			if err := syscall.SetNonblock(fd, false); err != nil {
				syscall.Close(fd)
				return nil, err
			}
			return os.NewFile(uintptr(fd), path), nil
		}
		if !errors.Is(err, syscall.ENXIO) { // ENXIO: a FIFO with no reader yet
			return nil, err
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("no process reads the FIFO %s, and dbsock was interrupted: nothing was written there", path)
		}
		if !said && stderr != nil {
			fmt.Fprintf(stderr, "dbsock: waiting for a reader on the FIFO %s (Ctrl-C gives up)\n", path)
			said = true
		}
		timer := time.NewTimer(50 * time.Millisecond)
		select {
		case <-ctx.Done():
		case <-timer.C:
		}
		timer.Stop()
	}
}

// replaceFile writes data to a temp file next to path and renames it into
// place, keeping the mode of a file that was there (0644 for a new one).
func replaceFile(path string, data []byte) error {
	mode := fs.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, werr := f.Write(data)
	if err := errors.Join(werr, f.Close(), os.Chmod(tmp, mode)); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// checkOutDir checks a directory that files will be written into (--out
// DIR:hgrm): an existing writable directory, or a new one in an existing
// writable directory.
func checkOutDir(flag, path string) (outFile, error) {
	f := outFile{name: path, path: path}
	fi, err := f.resolve(flag)
	switch {
	case err != nil:
		return f, err
	case fi == nil:
		return f, checkDir(flag, path, filepath.Dir(f.path))
	case !fi.IsDir():
		return f, usagef("%s %q is not a directory; hgrm writes one file per target and transport into a directory", flag, path)
	}
	return f, checkDir(flag, path, f.path)
}
