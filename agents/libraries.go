package agents

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
)

// libraries are each stack's client libraries by target, the default
// first (docs/agents.md): a target a stack has none for is not measured
// from it.
var libraries = map[string]map[string][]string{
	"c": {"redis": {"hiredis"}, "postgres": {"libpq"}, "pgbouncer": {"libpq"}, "mysql": {"libmariadb"}, "memcached": {"libmemcached"}},
	"python": {"redis": {"redis-py"}, "postgres": {"psycopg2", "psycopg"}, "pgbouncer": {"psycopg2", "psycopg"},
		"mysql": {"mysqldb", "pymysql"}, "memcached": {"pymemcache"}},
	"node": {"redis": {"node-redis"}, "postgres": {"node-pg"}, "pgbouncer": {"node-pg"}, "mysql": {"node-mysql"}},
	"php":  {"redis": {"phpredis"}, "postgres": {"pgsql"}, "pgbouncer": {"pgsql"}, "mysql": {"mysqli"}, "memcached": {"memcached"}},
}

// ErrNoLibrary is wrapped when a stack's agent has no client library for
// a target.
var ErrNoLibrary = errors.New("no client library")

// Library is the library stack's agent uses for target: library when it
// is one of the stack's libraries for target, its default when library is
// "". The error wraps ErrNoLibrary, and names what the stack has.
func Library(stack, target, library string) (string, error) {
	libs, ok := libraries[stack]
	if !ok {
		return "", fmt.Errorf("no client stack %q", stack)
	}
	have := libs[target]
	switch {
	case len(have) == 0:
		return "", fmt.Errorf("the %s agent has %w for %s", stack, ErrNoLibrary, target)
	case library == "":
		return have[0], nil
	case !slices.Contains(have, library):
		return "", fmt.Errorf("the %s agent has %w %q for %s (it has %s)", stack, ErrNoLibrary, library, target, strings.Join(have, ", "))
	}
	return library, nil
}

// Dir is the agents directory dbsock runs its agents from: the one
// beside this package's source, when dbsock runs from its source tree,
// else ./agents. It says where it looked when neither is there.
func Dir() (string, error) {
	var tried []string
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		dir := filepath.Dir(file)
		if _, err := os.Stat(filepath.Join(dir, "c", "Makefile")); err == nil {
			return dir, nil
		}
		tried = append(tried, dir)
	}
	if abs, err := filepath.Abs("agents"); err == nil {
		if _, err := os.Stat(filepath.Join(abs, "c", "Makefile")); err == nil {
			return abs, nil
		}
		tried = append(tried, abs)
	}
	return "", fmt.Errorf("the agents directory of dbsock's source is not at %v: run dbsock from its source tree, with scripts/install-deps.sh --with-stacks done", tried)
}

// noTLS says why an agent cannot be measured on the tls path to a
// target: its library has no TLS here, or the server shows dbsock no other
// session's TLS, so that an agent's claim could not be checked.
var noTLS = map[string]string{
	"c/redis":          "hiredis 0.14 has no TLS",
	"c/memcached":      "libmemcached has no TLS",
	"python/memcached": "the agent's pymemcache connection has no TLS",
	"php/memcached":    "the memcached extension has no TLS",
	"memcached":        "memcached's stats conns does not say whether another connection is encrypted, so dbsock could not verify an agent's TLS",
	"mysql":            "MariaDB shows no other session's TLS without performance_schema, so dbsock could not verify an agent's TLS",
}

// NoTLS is why stack's agent is not measured on the tls path to target,
// or "" when it is.
func NoTLS(stack, target string) string {
	if why := noTLS[target]; why != "" {
		return why
	}
	return noTLS[stack+"/"+target]
}
