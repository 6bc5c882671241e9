package compose

//go:generate go run ./gen compose.yaml

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/dbsock/dbsock/supply"
)

// Render writes compose.yaml from the descriptions of services' servers
// (supply.Description, as the docker provider starts them): the file the
// compose provider runs, and users run by hand. go generate ./compose
// writes it; a test fails when the file is not what Render writes.
func Render(services []supply.Target) ([]byte, error) {
	var svcs []supply.Service
	images := []string{}
	for _, t := range services {
		if t.Container != nil && t.Container.Behind != nil {
			continue // a hop in a container of its own: the docker provider's alone
		}
		if t.Container == nil || t.Container.Described == nil {
			return nil, fmt.Errorf("render compose.yaml: target %s has an image but no description of its server (supply.Description)", t.Name)
		}
		d := t.Container.Described
		s := d.ComposeService()
		if err := checkDollars(s); err != nil {
			return nil, fmt.Errorf("render compose.yaml: service %s: %w", s.Name, err)
		}
		svcs = append(svcs, s)
		if off := d.Container.Offline; off != "" && off != d.Container.Image {
			images = append(images, "DBSOCK_"+strings.ToUpper(t.Name)+"_IMAGE="+off)
		}
	}
	var b strings.Builder
	header(&b, svcs, images)
	b.WriteString("services:\n")
	for i, s := range svcs {
		if i > 0 {
			b.WriteString("\n")
		}
		writeService(&b, s)
	}
	b.WriteString("\nsecrets:\n")
	for _, s := range svcs {
		for _, name := range s.Secrets {
			fmt.Fprintf(&b, "  %s:\n    file: ${DBSOCK_SECRETS_DIR:-/tmp/dbsock-compose/secrets}/%s\n", name, name)
		}
	}
	return []byte(b.String()), nil
}

// header is the file's opening comment: what it is and how to run it by
// hand.
func header(b *strings.Builder, svcs []supply.Service, images []string) {
	var dirs, secrets []string
	for _, s := range svcs {
		dirs = append(dirs, "$DBSOCK_SOCKET_DIR/"+s.Name)
		for _, name := range s.Secrets {
			secrets = append(secrets, strings.TrimSuffix(name, "-password"))
		}
	}
	lines := []string{
		"dbsock's servers for Docker Compose: host networking, servers listening on",
		"loopback only (127.0.0.1, and ::1 when DBSOCK_BIND says so:",
		`DBSOCK_BIND=127.0.0.1,::1 DBSOCK_BIND_SPACED="127.0.0.1 ::1"), and each`,
		"server's Unix socket directory bind-mounted from the host, so that a",
		"client on the host can measure both transports.",
		"",
		"Written by go generate ./compose from each target's description of its",
		"server (targets/NAME/server.go), from which the docker and local",
		"providers start it too: change those, not this file.",
		"",
		"The passwords are Compose secrets: files in $DBSOCK_SECRETS_DIR, one per",
		"password, mounted at /run/secrets/NAME in the service that uses it and",
		"read there through the images' VAR_FILE variables (or by the command",
		"line's shell): no password is in a container's configuration or",
		"environment, or in Compose's own environment.",
		"",
		"By hand (docker compose v2, or docker-compose 1.29):",
		"  export DBSOCK_SOCKET_DIR=/tmp/dbsock-compose DBSOCK_SECRETS_DIR=/tmp/dbsock-compose/secrets",
	}
	lines = append(lines, wrap("  mkdir -p -m 0777", dirs, "    ")...)
	lines = append(lines, "  mkdir -p -m 0700 $DBSOCK_SECRETS_DIR")
	lines = append(lines, wrap("  for s in", secrets, "    ")...)
	lines[len(lines)-1] += "; do"
	lines = append(lines,
		"    (umask 022; openssl rand -hex 16 > $DBSOCK_SECRETS_DIR/$s-password)",
		"  done",
		"  docker compose -f compose/compose.yaml up -d",
		"then measure them with dbsock's external provider (see README.md), with",
		"--TARGET-password-file $DBSOCK_SECRETS_DIR/TARGET-password. The files are",
		"readable by every user of the container (an image may never run as",
		"root), so their directory is the one that is private. Without an image",
		"registry, build dbsock's own images first (make images) and set")
	lines = append(lines, wrap("", images, "")...)
	lines[len(lines)-1] += "."
	lines = append(lines, "",
		"dbsock run all --provider compose does all of this itself, with a private",
		"socket dir, free ports and random passwords, and takes it down afterwards.")
	for _, l := range lines {
		b.WriteString(strings.TrimRight("# "+l, " ") + "\n")
	}
}

// wrap is words after first, in lines of at most 76 characters, the
// lines after the first starting with indent (a shell line's go on with
// a backslash).
func wrap(first string, words []string, indent string) []string {
	var lines []string
	line := first
	for _, w := range words {
		switch {
		case line == "" || line == indent:
			line += w
		case len(line)+1+len(w) > 76:
			if indent != "" {
				line += " \\"
			}
			lines = append(lines, line)
			line = indent + w
		default:
			line += " " + w
		}
	}
	return append(lines, line)
}

// writeService writes s.
func writeService(b *strings.Builder, s supply.Service) {
	if s.Note != "" {
		for _, l := range strings.Split(s.Note, "\n") {
			b.WriteString(strings.TrimRight("  # "+l, " ") + "\n")
		}
	}
	fmt.Fprintf(b, "  %s:\n", s.Name)
	fmt.Fprintf(b, "    image: %s\n", scalar(s.Image, 4))
	b.WriteString("    network_mode: host\n")
	b.WriteString("    cpuset: \"${DBSOCK_CPUSET:-}\"\n")
	b.WriteString("    command:\n")
	for _, arg := range s.Command {
		fmt.Fprintf(b, "      - %s\n", scalar(arg, 8))
	}
	if len(s.Env) > 0 {
		b.WriteString("    environment:\n")
		keys := make([]string, 0, len(s.Env))
		for k := range s.Env {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			fmt.Fprintf(b, "      %s: %s\n", k, scalar(s.Env[k], 8))
		}
	}
	// One line, as serviceSecrets reads it.
	fmt.Fprintf(b, "    secrets: [%s]\n", strings.Join(s.Secrets, ", "))
	fmt.Fprintf(b, "    volumes:\n      - ${DBSOCK_SOCKET_DIR:-/tmp/dbsock-compose}/%s:/sock\n", s.Name)
	fmt.Fprintf(b, "    labels:\n      %s: \"1\"\n      %s.target: %s\n      %s: ${DBSOCK_PID:-by-hand}\n      %s: \"${DBSOCK_OWNER:-by-hand}\"\n",
		supply.Label, supply.Label, s.Name, supply.PIDLabel, supply.OwnerLabel)
	fmt.Fprintf(b, "    healthcheck:\n      test: [\"CMD-SHELL\", %s]\n      interval: 2s\n      retries: 60\n", strconv.Quote("test -S "+s.Socket))
}

// plainScalar is a string YAML reads as that string when it is written as
// it is (no quotes): not a number, a boolean or null, no indicator first,
// no ": " or " #" within. One of compose's variables first is quoted: what
// compose makes of it (a port) stays a string.
var plainScalar = regexp.MustCompile(`^[A-Za-z/_-][A-Za-z0-9_./:=,+@${}-]*$`)

// yamlWords are plain scalars YAML 1.1 (compose's docker-compose 1.x)
// reads as something other than a string.
var yamlWords = map[string]bool{"y": true, "n": true, "yes": true, "no": true, "on": true, "off": true, "true": true, "false": true, "null": true}

// scalar is s as a YAML scalar: plain when it may be, a literal block
// (indented by indent) when it has lines, else double-quoted.
func scalar(s string, indent int) string {
	switch {
	case plainScalar.MatchString(s) && s != "-" && !yamlWords[strings.ToLower(s)]:
		return s
	case strings.Contains(s, "\n") && !strings.HasPrefix(s, " ") && !strings.HasSuffix(s, "\n"):
		pad := strings.Repeat(" ", indent)
		return "|-\n" + pad + strings.ReplaceAll(s, "\n", "\n"+pad)
	}
	return strconv.Quote(s)
}

// composeVariable is one of compose's variables in a value: ${NAME} or
// ${NAME:-default}, or $$, a literal $.
var composeVariable = regexp.MustCompile(`\$\{DBSOCK_[A-Z0-9_]+(:-[^}]*)?\}|\$\$`)

// checkDollars fails when a value of s has a $ that is neither one of
// dbsock's compose variables nor $$: compose would read it as a variable
// of its own environment.
func checkDollars(s supply.Service) error {
	values := append(slices.Clone(s.Command), s.Image, s.Socket)
	for _, v := range s.Env {
		values = append(values, v)
	}
	for _, v := range values {
		if strings.Contains(composeVariable.ReplaceAllString(v, ""), "$") {
			return fmt.Errorf("%q has a $ compose would read as a variable (a literal $ is $$ in compose.yaml)", v)
		}
	}
	return nil
}
