// Command probe reports, as JSON on stdout, what the process it runs as
// may do: its user, its capabilities and NoNewPrivs (from
// /proc/self/status), what "kill -0" does to pid 1 and to the pid given
// as its argument (a process of the host), what pid 1 is, and whether it
// may write its root filesystem. TestClientContainerPrivileges runs it in
// dbsock's client container.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

func main() {
	out := map[string]string{
		"uid": strconv.Itoa(os.Getuid()),
		"gid": strconv.Itoa(os.Getgid()),
	}
	if f, err := os.Open("/proc/self/status"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			k, v, ok := strings.Cut(sc.Text(), ":")
			if ok && (strings.HasPrefix(k, "Cap") || k == "NoNewPrivs") {
				out[k] = strings.TrimSpace(v)
			}
		}
		f.Close()
	}
	out["kill -0 1"] = errWords(syscall.Kill(1, 0))
	if len(os.Args) > 1 {
		if pid, err := strconv.Atoi(os.Args[1]); err == nil {
			out["kill -0 host"] = errWords(syscall.Kill(pid, 0))
		}
	}
	cmdline, err := os.ReadFile("/proc/1/cmdline")
	out["pid 1"] = strings.TrimSpace(strings.ReplaceAll(string(cmdline), "\x00", " "))
	if err != nil {
		out["pid 1"] = err.Error()
	}
	out["write /"] = errWords(os.WriteFile("/probe-was-here", []byte("x"), 0o600))
	b, _ := json.Marshal(out)
	fmt.Println(string(b))
}

// errWords is "ok" for no error, else the error.
func errWords(err error) string {
	if err == nil {
		return "ok"
	}
	return err.Error()
}
