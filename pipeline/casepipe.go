package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"
)

// A case's passwords go to the client container through a named pipe
// beside its case file (FILE.pw), never through the file: a pipe keeps
// what is written to it in the kernel until it is read, so no password is
// ever on disk, and a pipe left behind by a run that ended at once (a
// second Ctrl-C) holds nothing.

// pipeSuffix names a case's password pipe: FILE.pw.
const pipeSuffix = ".pw"

// maxPasswordBytes bounds what the client reads from the pipe.
const maxPasswordBytes = 1 << 16

// pipeWait bounds how long either side waits for the other.
const pipeWait = 30 * time.Second

// offerPasswords makes the pipe and writes pws to it, as JSON, once the
// client opens it, until ctx ends; wait returns how that went and removes
// the pipe.
func offerPasswords(ctx context.Context, pipe string, pws []string) (wait func() error, err error) {
	b, err := json.Marshal(pws)
	if err != nil {
		return nil, err
	}
	if err := syscall.Mkfifo(pipe, 0o600); err != nil {
		return nil, fmt.Errorf("make the pipe that hands the client its passwords (%s): %w", pipe, err)
	}
	done := make(chan error, 1)
	go func() { done <- writePipe(ctx, pipe, b) }()
	return func() error {
		err := <-done
		return errors.Join(err, os.Remove(pipe))
	}, nil
}

// writePipe writes b to the pipe once a reader has it open: until then
// an open for writing without blocking fails (ENXIO), and is tried again
// until ctx ends.
func writePipe(ctx context.Context, pipe string, b []byte) error {
	delay := time.Millisecond
	for {
		f, err := os.OpenFile(pipe, os.O_WRONLY|syscall.O_NONBLOCK, 0)
		if err == nil {
			defer f.Close()
			_ = f.SetWriteDeadline(time.Now().Add(pipeWait))
			_, err = f.Write(b)
			return err
		}
		if !errors.Is(err, syscall.ENXIO) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(delay):
		}
		delay = min(2*delay, 50*time.Millisecond)
	}
}

// readPasswords reads a case's passwords from its pipe, which must be a
// named pipe, as dbsock run writes them: at most maxPasswordBytes, within
// pipeWait.
func readPasswords(pipe string) ([]string, error) {
	fi, err := os.Lstat(pipe)
	if err != nil {
		return nil, err
	}
	if fi.Mode().Type() != os.ModeNamedPipe {
		return nil, fmt.Errorf("%s is not a named pipe (%s)", pipe, fi.Mode().Type())
	}
	f, err := os.OpenFile(pipe, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	deadline := time.Now().Add(pipeWait)
	_ = f.SetReadDeadline(deadline)
	var buf bytes.Buffer
	chunk := make([]byte, 4096)
	for {
		n, err := f.Read(chunk)
		buf.Write(chunk[:n])
		if buf.Len() > maxPasswordBytes {
			return nil, fmt.Errorf("%s: more than %d bytes", pipe, maxPasswordBytes)
		}
		switch {
		case err == nil:
			continue
		case errors.Is(err, io.EOF) && buf.Len() > 0: // written and closed
			var pws []string
			if err := json.Unmarshal(buf.Bytes(), &pws); err != nil {
				return nil, fmt.Errorf("%s: %w", pipe, err)
			}
			return pws, nil
		case errors.Is(err, io.EOF): // no writer yet
			if time.Now().After(deadline) {
				return nil, fmt.Errorf("%s: nothing was written to it within %s", pipe, pipeWait)
			}
			time.Sleep(2 * time.Millisecond)
		default:
			return nil, fmt.Errorf("%s: %w", pipe, err)
		}
	}
}
