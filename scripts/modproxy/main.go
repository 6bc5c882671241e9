// Command modproxy writes a Go module proxy directory (a GOPROXY=file://
// one) that serves this checkout's HEAD commit as the module
// github.com/dbsock/dbsock at that commit's pseudo-version, and prints
// the version. The example module's test (scripts/example-module.sh)
// builds against it as a user's module builds against a release: with no
// replace directive, from outside this repository.
//
//	go run ./scripts/modproxy DIR
//
// It serves what is committed: uncommitted changes are not in the module
// (it says so on stderr when there are some).
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/mod/module"
	modzip "golang.org/x/mod/zip"
)

const path = "github.com/dbsock/dbsock"

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: go run ./scripts/modproxy DIR")
		os.Exit(2)
	}
	version, err := write(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "modproxy:", err)
		os.Exit(1)
	}
	fmt.Println(version)
}

// git runs git in the checkout and returns its trimmed output.
func git(args ...string) (string, error) {
	out, err := exec.Command("git", args...).Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(out)), nil
}

// write lays out dir as a module proxy serving HEAD, and returns its
// version.
func write(dir string) (string, error) {
	root, err := git("rev-parse", "--show-toplevel")
	if err != nil {
		return "", err
	}
	rev, err := git("rev-parse", "HEAD")
	if err != nil {
		return "", err
	}
	secs, err := git("show", "-s", "--format=%ct", "HEAD")
	if err != nil {
		return "", err
	}
	unix, err := strconv.ParseInt(secs, 10, 64)
	if err != nil {
		return "", fmt.Errorf("commit time %q: %w", secs, err)
	}
	if dirty, _ := git("status", "--porcelain", "--untracked-files=no"); dirty != "" {
		fmt.Fprintf(os.Stderr, "modproxy: serving HEAD (%.12s); uncommitted changes are not in it\n", rev)
	}
	when := time.Unix(unix, 0).UTC()
	v := module.Version{Path: path, Version: module.PseudoVersion("", "", when, rev[:12])}
	at := filepath.Join(dir, path, "@v")
	if err := os.MkdirAll(at, 0o755); err != nil {
		return "", err
	}
	gomod, err := exec.Command("git", "-C", root, "show", rev+":go.mod").Output()
	if err != nil {
		return "", fmt.Errorf("read go.mod at %.12s: %w", rev, err)
	}
	zip, err := zipAt(v, root, rev)
	if err != nil {
		return "", fmt.Errorf("zip %s at %.12s: %w", path, rev, err)
	}
	info, _ := json.Marshal(struct {
		Version string
		Time    time.Time
	}{v.Version, when})
	for name, data := range map[string][]byte{
		v.Version + ".info": info,
		v.Version + ".mod":  gomod,
		v.Version + ".zip":  zip,
		"list":              []byte(v.Version + "\n"),
	} {
		if err := os.WriteFile(filepath.Join(at, name), data, 0o644); err != nil {
			return "", err
		}
	}
	// @latest: a proxy answers it when its list has no release version.
	if err := os.WriteFile(filepath.Join(dir, path, "@latest"), info, 0o644); err != nil {
		return "", err
	}
	return v.Version, nil
}

// zipAt is the module zip of root at rev. A linked worktree (git worktree
// add), whose git directory is not root/.git, is zipped from a clone of
// it that shares its objects, made for the purpose and removed after.
func zipAt(v module.Version, root, rev string) ([]byte, error) {
	var zip bytes.Buffer
	err := modzip.CreateFromVCS(&zip, v, root, rev, "")
	var unrecognized *modzip.UnrecognizedVCSError
	if !errors.As(err, &unrecognized) {
		return zip.Bytes(), err
	}
	tmp, terr := os.MkdirTemp("", "modproxy-*")
	if terr != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	if out, cerr := exec.Command("git", "clone", "-q", "--shared", "--no-checkout", root, tmp).CombinedOutput(); cerr != nil {
		return nil, fmt.Errorf("%w (and a clone of the worktree failed: %v: %s)", err, cerr, out)
	}
	zip.Reset()
	if err := modzip.CreateFromVCS(&zip, v, tmp, rev, ""); err != nil {
		return nil, err
	}
	return zip.Bytes(), nil
}
