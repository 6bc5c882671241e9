package supply

import (
	"os"
	"strings"
)

// serverEnvNames are the variables of dbsock's environment a server it
// starts keeps: where programs are, the locale and time zone, the home
// and temp directories, and the Go runtime's own settings for dbsock's
// child servers. Nothing else passes: dbsock's environment may hold
// secrets (DBSOCK_*_PASSWORD, a CI job's tokens) that a server has no use
// for and that its /proc/PID/environ would show.
var serverEnvNames = map[string]bool{
	"PATH": true, "LANG": true, "LANGUAGE": true, "TZ": true, "HOME": true, "TMPDIR": true,
	"GOCOVERDIR": true, "GODEBUG": true, "GOMAXPROCS": true, "GOGC": true, "GOMEMLIMIT": true,
}

// ServerEnv is the environment of a server process dbsock starts: the few
// variables of its own environment a server needs (PATH, LANG and LC_*,
// TZ, HOME, TMPDIR), then extra ("NAME=value", which win).
func ServerEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if serverEnvNames[name] || strings.HasPrefix(name, "LC_") {
			env = append(env, kv)
		}
	}
	return append(env, extra...)
}
