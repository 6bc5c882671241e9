package agents

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// Shell runs the commands of a user's agent that need a shell.
const Shell = "/bin/sh"

// Command is the Spec of a user's own agent (--clients cmd:COMMAND), in
// dbsock's directory, with the same minimal environment as every agent;
// the target's name is its last argument, and no shell ever reads it:
//
//   - a simple command (words, quoted or not, with no variable, command
//     substitution, pattern, redirection, ; or &&) is split as the shell
//     would split it (mvdan.cc/sh) and run directly, its executable
//     looked up on PATH now, with target as one more argument;
//   - a command that needs a shell is run by /bin/sh -c with target as
//     $1, which the command must name ("$1" or "$@"); a single command
//     is run by exec, so that the shell does not stay as its parent.
//
// What cannot be run so is an error saying why: an empty command,
// unbalanced quotes, an executable not found, a shell command that does
// not pass "$1" on.
func Command(command, target string) (Spec, error) {
	if strings.TrimSpace(command) == "" {
		return Spec{}, errors.New("the command is empty")
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangPOSIX)).Parse(strings.NewReader(command), "")
	if err != nil {
		return Spec{}, fmt.Errorf("the shell cannot read it: %v", err)
	}
	if len(f.Stmts) == 0 {
		return Spec{}, errors.New("it holds no command (only a comment)")
	}
	call := simpleCall(f)
	if call == nil {
		return shellCommand(f, command, target)
	}
	var argv []string
	for _, w := range call.Args {
		s, err := expand.Literal(nil, w)
		if err != nil {
			return Spec{}, fmt.Errorf("the shell cannot read it: %v", err)
		}
		argv = append(argv, s)
	}
	exe, err := executable(argv[0])
	if err != nil {
		return Spec{}, err
	}
	return Spec{Stack: "cmd", Argv: append(append([]string{exe}, argv[1:]...), target)}, nil
}

// simpleCall is f's one command when it is a plain call of literal words
// (quoted or not): nothing a shell would expand, redirect or run beside
// it; nil otherwise.
func simpleCall(f *syntax.File) *syntax.CallExpr {
	s := f.Stmts[0]
	call, ok := s.Cmd.(*syntax.CallExpr)
	if len(f.Stmts) != 1 || !ok || len(call.Assigns) > 0 || len(call.Args) == 0 || len(s.Redirs) > 0 ||
		s.Negated || s.Background || s.Coprocess || s.Disown {
		return nil
	}
	for _, w := range call.Args {
		if !literal(w.Parts, false) {
			return nil
		}
	}
	return call
}

// literal says whether parts are text alone: no expansion of any kind
// (a pattern, a tilde or braces outside quotes among them).
func literal(parts []syntax.WordPart, quoted bool) bool {
	for _, p := range parts {
		switch p := p.(type) {
		case *syntax.Lit:
			if !quoted && strings.ContainsAny(p.Value, "*?[]{}~") {
				return false
			}
		case *syntax.SglQuoted:
			if p.Dollar {
				return false
			}
		case *syntax.DblQuoted:
			if p.Dollar || !literal(p.Parts, true) {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// shellCommand runs command, which needs a shell, by /bin/sh -c with
// target as $1.
func shellCommand(f *syntax.File, command, target string) (Spec, error) {
	passes := false
	syntax.Walk(f, func(n syntax.Node) bool {
		if pe, ok := n.(*syntax.ParamExp); ok && pe.Param != nil && (pe.Param.Value == "1" || pe.Param.Value == "@" || pe.Param.Value == "*") {
			passes = true
		}
		return !passes
	})
	if !passes {
		return Spec{}, errors.New(`it needs a shell (a variable, pattern, redirection, ; or && in it), and a shell command gets the target as $1: write "$1" where the target goes, ` +
			`such as cmd:'cd /srv/app && exec python3 agent.py "$1"'`)
	}
	if _, err := os.Stat(Shell); err != nil {
		return Spec{}, fmt.Errorf("it needs a shell, and %s is missing: %v", Shell, err)
	}
	s := f.Stmts[0]
	if call, ok := s.Cmd.(*syntax.CallExpr); ok && len(f.Stmts) == 1 && len(call.Assigns) == 0 && len(s.Redirs) == 0 && !s.Negated && !s.Background && !s.Coprocess && !s.Disown {
		command = "exec " + command // the agent replaces the shell
	}
	return Spec{Stack: "cmd", Argv: []string{Shell, "-c", command, "sh", target}}, nil
}

// executable is name's path: as given when it has a slash (relative to
// dbsock's directory), else found on PATH; an error when it is missing
// or cannot be run.
func executable(name string) (string, error) {
	if !strings.Contains(name, "/") {
		p, err := exec.LookPath(name)
		if err != nil {
			return "", fmt.Errorf("%s is not an executable found on PATH: give its full path", name)
		}
		return p, nil
	}
	fi, err := os.Stat(name)
	switch {
	case err != nil:
		return "", fmt.Errorf("%s cannot be run: %v", name, errors.Unwrap(err))
	case fi.IsDir():
		return "", fmt.Errorf("%s is a directory, not an executable", name)
	case fi.Mode()&0o111 == 0:
		return "", fmt.Errorf("%s is not executable (mode %v): run it by its interpreter, such as /usr/bin/python3 %s", name, fi.Mode().Perm(), name)
	}
	if abs, err := filepath.Abs(name); err == nil {
		return abs, nil
	}
	return name, nil
}
