package agents

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/dbsock/dbsock/agents/stackfile"
)

// embedded are the stacks' own files (stackfile.Patterns: the same
// kinds as this line), carried in dbsock's binary so that a dbsock
// installed anywhere installs its agents at their first use (install.go).
//
//go:embed */stack.json */Makefile */*.c */*.h */*.py */*.js */*.php */*.rb */*.java */*.sh
var embedded embed.FS

// DirEnv names the variable that points dbsock at another agents
// directory than the one in its binary: a directory laid out as agents/
// (each stack a directory with its stack.json), whose stacks replace
// dbsock's own (docs/agents.md).
const DirEnv = "DBSOCK_AGENTS_DIR"

// catalog is the stacks of one agents directory, or of the embedded one.
type catalog struct {
	fsys   fs.FS
	origin string // where its files come from, for messages
	stacks []stackfile.Stack
	// hash is over every stack's own files: the name of the directory in
	// the cache where they are installed.
	hash string

	mu        sync.Mutex
	installed map[string]installResult
}

type installResult struct {
	dir string
	err error
}

var (
	catalogsMu sync.Mutex
	catalogs   = map[string]*catalog{}
)

// Dir is the agents directory dbsock takes its stacks from: $DBSOCK_AGENTS_DIR,
// or "" for the ones in its binary. It says what is wrong with the
// variable's directory.
func Dir() (string, error) {
	dir := os.Getenv(DirEnv)
	if dir == "" {
		return "", nil
	}
	abs, err := filepath.Abs(dir)
	if err == nil {
		var fi os.FileInfo
		if fi, err = os.Stat(abs); err == nil && !fi.IsDir() {
			err = fmt.Errorf("not a directory")
		}
	}
	if err != nil {
		return "", fmt.Errorf("%s=%s is not an agents directory (%v): point it at a directory laid out as dbsock's agents/, or unset it for the stacks in dbsock's binary", DirEnv, dir, err)
	}
	return abs, nil
}

// load is the catalog of the agents directory dir: "" for Dir's.
func load(dir string) (*catalog, error) {
	if dir == "" {
		var err error
		if dir, err = Dir(); err != nil {
			return nil, err
		}
	}
	if dir != "" {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return nil, err
		}
		dir = abs
	}
	catalogsMu.Lock()
	defer catalogsMu.Unlock()
	if c, ok := catalogs[dir]; ok {
		return c, nil
	}
	c := &catalog{fsys: embedded, origin: "dbsock's own sources (in its binary)", installed: map[string]installResult{}}
	if dir != "" {
		c.fsys, c.origin = os.DirFS(dir), dir
	}
	var err error
	if c.stacks, err = stackfile.Load(c.fsys); err != nil {
		return nil, err
	}
	if c.hash, err = c.digest(); err != nil {
		return nil, fmt.Errorf("read the client stacks of %s: %w", c.origin, err)
	}
	catalogs[dir] = c
	return c, nil
}

// digest is a hash of every stack's own files, names and contents.
func (c *catalog) digest() (string, error) {
	h := sha256.New()
	for _, s := range c.stacks {
		files, err := stackfile.Files(c.fsys, s)
		if err != nil {
			return "", err
		}
		for _, f := range files {
			b, err := fs.ReadFile(c.fsys, s.Name+"/"+f)
			if err != nil {
				return "", err
			}
			fmt.Fprintf(h, "%s/%s %d\n", s.Name, f, len(b))
			h.Write(b)
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// names are its stacks' names, in their order.
func (c *catalog) names() []string {
	var out []string
	for _, s := range c.stacks {
		out = append(out, s.Name)
	}
	return out
}

// stack is the stack named name, or an error that names the ones there are.
func (c *catalog) stack(name string) (stackfile.Stack, error) {
	i := slices.IndexFunc(c.stacks, func(s stackfile.Stack) bool { return s.Name == name })
	if i < 0 {
		return stackfile.Stack{}, fmt.Errorf("no client stack %q in %s (want one of %s)", name, c.origin, strings.Join(c.names(), ", "))
	}
	return c.stacks[i], nil
}

// Stacks are the client stacks of the agents directory dir ("" for
// Dir's), in the order help and reports list them.
func Stacks(dir string) ([]string, error) {
	c, err := load(dir)
	if err != nil {
		return nil, err
	}
	return c.names(), nil
}

// Declared is stack's declaration in the agents directory dir ("" for
// Dir's; the zero Stack for a stack it does not have).
func Declared(dir, stack string) stackfile.Stack {
	c, err := load(dir)
	if err != nil {
		return stackfile.Stack{}
	}
	s, _ := c.stack(stack)
	return s
}

// Language names stack for a reader ("Node.js"), as the stacks of Dir's
// agents directory declare it; "" for a stack they do not have.
func Language(stack string) string {
	c, err := load("")
	if err != nil {
		return ""
	}
	s, err := c.stack(stack)
	if err != nil {
		return ""
	}
	return s.Language
}
