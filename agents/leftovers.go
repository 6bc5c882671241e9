package agents

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/dbsock/dbsock/supply"
)

// Leftover is a process of an agent (or its keeper) whose dbsock run is
// over: what dbsock clean ends. An agent's processes end with their run
// (keeper_linux.go); one is left only when its keeper was killed outright.
type Leftover struct {
	PID     int
	Command string // its command line, as ps shows it
	Why     string // why its run is known to be over
}

// End kills it.
func (l Leftover) End() error {
	if err := syscall.Kill(l.PID, syscall.SIGKILL); err != nil && err != syscall.ESRCH {
		return fmt.Errorf("end agent process %d (%s): %w", l.PID, l.Command, err)
	}
	return nil
}

// FindLeftovers lists the processes marked as an agent's (MarkEnv in
// their environment) whose run the engine at socket and this host show to
// be over, and says whether some agent's run is still going (live), or
// cannot be told: a run's CA files are its while it runs.
func FindLeftovers(ctx context.Context, socket string) (left []Leftover, live bool) {
	stats, _ := filepath.Glob("/proc/[0-9]*/environ")
	for _, f := range stats {
		pid, err := strconv.Atoi(filepath.Base(filepath.Dir(f)))
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		mark := ""
		for _, kv := range bytes.Split(env, []byte{0}) {
			if v, ok := bytes.CutPrefix(kv, []byte(MarkEnv+"=")); ok {
				mark = string(v)
			}
		}
		if mark == "" {
			continue
		}
		o, err := supply.ParseOwner(mark)
		if err != nil {
			live = true // not a mark dbsock wrote: left alone
			continue
		}
		l, why := o.Judge(ctx, socket)
		if l != supply.OwnerDead {
			live = true
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join(filepath.Dir(f), "cmdline"))
		left = append(left, Leftover{PID: pid, Command: strings.TrimSpace(string(bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '}))), Why: why})
	}
	return left, live
}

// CAFileAge is how old a CA file an agent wrote must be for dbsock clean
// to remove it: an agent removes its own once its open is done.
const CAFileAge = 10 * time.Minute

// LeftoverCAFiles are the CA files agents wrote (dbsock-ca-* in dir, of
// this user, at least CAFileAge old) that their agents did not remove:
// they were killed while they opened a connection.
func LeftoverCAFiles(dir string) []string {
	files, _ := filepath.Glob(filepath.Join(dir, "dbsock-ca-*"))
	var out []string
	for _, f := range files {
		fi, err := os.Lstat(f)
		if err != nil || !fi.Mode().IsRegular() || time.Since(fi.ModTime()) < CAFileAge {
			continue
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() && os.Geteuid() != 0 {
			continue
		}
		out = append(out, f)
	}
	return out
}
