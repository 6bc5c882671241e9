package agents

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/dbsock/dbsock/agents/stackfile"
)

// installedMark is the file an installed stack's directory holds once
// everything in it is there.
const installedMark = ".installed"

// unpackedDir is where a stack's unpacked packages go in its directory.
const unpackedDir = "unpacked"

// buildTimeout bounds a stack's build (the C agent's make).
const buildTimeout = 5 * time.Minute

// getBy is what every message about a missing package adds: how to get it.
const getBy = "scripts/install-deps.sh --with-stacks, as root in dbsock's checkout, installs every stack's"

// installLog is where an install says what it installs (tests take it).
var installLog io.Writer = os.Stderr

// CacheDir is where dbsock installs the stacks' agents at their first
// use: dbsock/agents in the user's cache directory (os.UserCacheDir:
// $XDG_CACHE_HOME, else ~/.cache), a directory per set of sources.
func CacheDir() (string, error) {
	base, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("find where to install the client stacks' agents: %w (set XDG_CACHE_HOME to a directory you may write)", err)
	}
	return filepath.Join(base, "dbsock", "agents"), nil
}

// install is the directory where stack s of c is installed, installing
// it there (once per process) when it is not: its files copied, its
// packages unpacked, its build run. It says on log what it installs and
// from what.
func (c *catalog) install(s stackfile.Stack, log io.Writer) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if r, ok := c.installed[s.Name]; ok {
		return r.dir, r.err
	}
	dir, err := c.installOnce(s, log)
	c.installed[s.Name] = installResult{dir, err}
	return dir, err
}

func (c *catalog) installOnce(s stackfile.Stack, log io.Writer) (string, error) {
	cache, err := CacheDir()
	if err != nil {
		return "", err
	}
	root := filepath.Join(cache, c.hash)
	dir := filepath.Join(root, s.Name)
	if _, err := os.Stat(filepath.Join(dir, installedMark)); err == nil {
		return dir, nil
	}
	if missing := missingPackages(s.Packages); len(missing) > 0 {
		return "", fmt.Errorf("install the %s stack's agent: it needs Debian's %s, not installed here: as root, apt-get install %s (%s)",
			s.Name, strings.Join(missing, ", "), strings.Join(missing, " "), getBy)
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", fmt.Errorf("install the %s stack's agent: %w (set XDG_CACHE_HOME to a directory you may write)", s.Name, err)
	}
	tmp, err := os.MkdirTemp(root, "."+s.Name+"-")
	if err != nil {
		return "", fmt.Errorf("install the %s stack's agent: %w (set XDG_CACHE_HOME to a directory you may write)", s.Name, err)
	}
	defer os.RemoveAll(tmp) // gone already once it is renamed
	fmt.Fprintf(log, "dbsock: installing the %s stack's agent into %s, from %s: %s\n", s.Name, dir, c.origin, said(s))
	steps := []func(stackfile.Stack, string) error{c.copyFiles, unpack, build}
	for _, step := range steps {
		if err := step(s, tmp); err != nil {
			return "", fmt.Errorf("install the %s stack's agent into %s: %w", s.Name, dir, err)
		}
	}
	if err := os.WriteFile(filepath.Join(tmp, installedMark), []byte(c.origin+"\n"), 0o644); err != nil {
		return "", fmt.Errorf("install the %s stack's agent: %w", s.Name, err)
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return "", fmt.Errorf("install the %s stack's agent: %w", s.Name, err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		if _, e := os.Stat(filepath.Join(dir, installedMark)); e == nil {
			return dir, nil // another dbsock installed the same sources first
		}
		return "", fmt.Errorf("install the %s stack's agent into %s: %w", s.Name, dir, err)
	}
	return dir, nil
}

// said says what installing s takes: its packages, what it builds or
// unpacks, and what is missing for which library and how to get it.
func said(s stackfile.Stack) string {
	var parts []string
	if len(s.Runtime) > 0 {
		parts = append(parts, "its agent runs on "+strings.Join(s.Runtime, " or "))
	}
	if len(s.Build) > 0 {
		parts = append(parts, "built with "+strings.Join(s.Build, " "))
	}
	if len(s.Packages) > 0 {
		parts = append(parts, "with Debian's "+strings.Join(s.Packages, ", "))
	}
	if u := s.Unpack; u != nil {
		parts = append(parts, fmt.Sprintf("unpacking Debian's %s and the %s* packages they depend on from %s with dpkg-deb -x",
			strings.Join(u.Packages, ", "), u.Within, filepath.Join(stackfile.DebsDir, s.Name)))
	}
	var have, lack []string
	for _, lib := range slices.Sorted(maps.Keys(s.Libraries)) {
		pkgs := s.Libraries[lib]
		if m := missingPackages(pkgs); len(m) > 0 {
			lack = append(lack, fmt.Sprintf("%s (%s)", strings.Join(m, " "), lib))
		} else if len(pkgs) > 0 {
			have = append(have, strings.Join(pkgs, ", "))
		}
	}
	if len(have) > 0 {
		parts = append(parts, "its libraries from Debian's "+strings.Join(have, ", "))
	}
	if len(lack) > 0 {
		parts = append(parts, "missing here: "+strings.Join(lack, ", ")+": as root, apt-get install them ("+getBy+")")
	}
	return strings.Join(parts, "; ")
}

// copyFiles copies s's own files from c into dir.
func (c *catalog) copyFiles(s stackfile.Stack, dir string) error {
	files, err := stackfile.Files(c.fsys, s)
	if err != nil {
		return err
	}
	for _, f := range files {
		b, err := fs.ReadFile(c.fsys, s.Name+"/"+f)
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, f), b, 0o644)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// unpack unpacks the Debian packages s reads without installing them
// into dir's unpackedDir, from stackfile.DebsDir.
func unpack(s stackfile.Stack, dir string) error {
	u := s.Unpack
	if u == nil {
		return nil
	}
	debs := filepath.Join(stackfile.DebsDir, s.Name)
	files, _ := filepath.Glob(filepath.Join(debs, "*.deb"))
	var lack []string
	for _, p := range u.Packages {
		if !slices.ContainsFunc(files, func(f string) bool { return strings.HasPrefix(filepath.Base(f), p+"_") }) {
			lack = append(lack, p)
		}
	}
	if len(lack) > 0 {
		return fmt.Errorf("Debian's %s (and the %s* packages they depend on) are not downloaded into %s: %s (it downloads them there, never installing them)",
			strings.Join(lack, ", "), u.Within, debs, getBy)
	}
	if _, err := exec.LookPath("dpkg-deb"); err != nil {
		return fmt.Errorf("unpack %s: no dpkg-deb here (Debian's dpkg has it)", debs)
	}
	for _, f := range files {
		if out, err := exec.Command("dpkg-deb", "-x", f, filepath.Join(dir, unpackedDir)).CombinedOutput(); err != nil {
			return fmt.Errorf("dpkg-deb -x %s: %w: %s", f, err, strings.TrimSpace(string(out)))
		}
	}
	return nil
}

// build runs s's build in dir, outside any make that runs dbsock.
func build(s stackfile.Stack, dir string) error {
	if len(s.Build) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), buildTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.Build[0], s.Build[1:]...)
	cmd.Dir = dir
	cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, "MAKEFLAGS=") || strings.HasPrefix(kv, "MFLAGS=") || strings.HasPrefix(kv, "MAKELEVEL=")
	})
	out, err := cmd.CombinedOutput()
	if err != nil {
		tail := strings.TrimSpace(string(out))
		if len(tail) > 2000 {
			tail = "..." + tail[len(tail)-2000:]
		}
		return fmt.Errorf("%s failed (%w): %s (it needs Debian's %s: %s)", strings.Join(s.Build, " "), err, tail, strings.Join(s.Packages, ", "), getBy)
	}
	return nil
}

var (
	dpkgMu   sync.Mutex
	dpkgSeen = map[string]bool{}
)

// missingPackages are those of pkgs that dpkg does not have installed;
// none where there is no dpkg-query (not Debian: the agent says what it
// lacks when it starts).
func missingPackages(pkgs []string) []string {
	if len(pkgs) == 0 {
		return nil
	}
	if _, err := exec.LookPath("dpkg-query"); err != nil {
		return nil
	}
	dpkgMu.Lock()
	defer dpkgMu.Unlock()
	var ask []string
	for _, p := range pkgs {
		if _, ok := dpkgSeen[p]; !ok {
			ask = append(ask, p)
		}
	}
	if len(ask) > 0 {
		for _, p := range ask {
			dpkgSeen[p] = false
		}
		// It exits 1 when one is unknown; what it prints of the others holds.
		out, _ := exec.Command("dpkg-query", append([]string{"-W", "-f=${Package} ${db:Status-Status}\n"}, ask...)...).Output()
		for _, line := range strings.Split(string(out), "\n") {
			if name, status, ok := strings.Cut(line, " "); ok && status == "installed" {
				dpkgSeen[name] = true
			}
		}
	}
	var missing []string
	for _, p := range pkgs {
		if !dpkgSeen[p] {
			missing = append(missing, p)
		}
	}
	return missing
}
