package agents

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/dbsock/dbsock/agents/stackfile"
)

// For is the Spec of stack's agent for target, whose server speaks
// protocol family (its driver's drivers.AgentLookup.Family), from the
// agents directory dir ("" for Dir's: $DBSOCK_AGENTS_DIR, or the stacks
// in dbsock's binary): its command line ends with the family and the
// library, which chooses one of the stack's libraries for the family
// ("" for its default, which the stack's stack.json names). The
// first use of a stack installs it into the cache (CacheDir), saying so on
// stderr; the error says what is missing and how to get it.
func For(dir, stack, target, family, library string) (Spec, error) {
	return ForModel(dir, stack, target, family, library, "")
}

// ForModel is For with the stack's agent started in worker model model
// ("" for its default: stackfile.Stack.ModelArgs), which must be one the
// stack declares and runs library in (Model, ModelMissing).
func ForModel(dir, stack, target, family, library, model string) (Spec, error) {
	c, err := load(dir)
	if err != nil {
		return Spec{}, err
	}
	s, err := c.stack(stack)
	if err != nil {
		return Spec{}, err
	}
	lib, err := Library(dir, stack, target, family, library)
	if err != nil {
		return Spec{}, err
	}
	if model, err = Model(dir, stack, model); err != nil {
		return Spec{}, err
	}
	if why := s.ModelMissing(model, lib); why != "" {
		return Spec{}, fmt.Errorf("the %s agent's %s model does not run %s: %s", stack, model, lib, why)
	}
	if m := missingPackages(s.Libraries[lib]); len(m) > 0 {
		return Spec{}, fmt.Errorf("the %s stack's %s needs Debian's %s, not installed here: as root, apt-get install %s (%s)",
			stack, lib, strings.Join(m, ", "), strings.Join(m, " "), getBy)
	}
	inst, err := c.install(s, installLog)
	if err != nil {
		return Spec{}, err
	}
	argv, err := command(s, inst)
	if err != nil {
		return Spec{}, err
	}
	argv = append(argv, s.ModelArgs(model)...)
	spec := Spec{Stack: stack, Argv: append(argv, family, lib)}
	if u := s.Unpack; u != nil {
		for name, dirs := range u.Env {
			var paths []string
			for _, d := range dirs {
				paths = append(paths, filepath.Join(inst, unpackedDir, d))
			}
			spec.Env = append(spec.Env, name+"="+strings.Join(paths, ":"))
		}
	}
	return spec, nil
}

// command is s's agent's command line, installed in inst: its runtime,
// the first of them present, and its Command, a word that names a file
// in inst being that file.
func command(s stackfile.Stack, inst string) ([]string, error) {
	var argv []string
	if len(s.Runtime) > 0 {
		for _, r := range s.Runtime {
			if _, err := os.Stat(r); err == nil {
				argv = append(argv, r)
				break
			}
		}
		if len(argv) == 0 {
			return nil, fmt.Errorf("the %s stack's agent runs on %s, and none is here: install it (%s)", s.Name, strings.Join(s.Runtime, " or "), getBy)
		}
	}
	for _, w := range s.Command {
		if f := filepath.Join(inst, w); !strings.ContainsRune(w, '/') && fileExists(f) {
			w = f
		}
		argv = append(argv, w)
	}
	return argv, nil
}

func fileExists(f string) bool {
	fi, err := os.Stat(f)
	return err == nil && fi.Mode().IsRegular()
}

// Installed says whether every stack of the agents directory dir ("" for
// Dir's) can run here: installed into the cache (it installs those that
// are not), its runtime present and every library's packages installed.
func Installed(dir string) error {
	c, err := load(dir)
	if err != nil {
		return err
	}
	var errs []error
	for _, s := range c.stacks {
		inst, err := c.install(s, installLog)
		if err == nil {
			_, err = command(s, inst)
		}
		if err == nil {
			for _, lib := range s.Debian() {
				if m := missingPackages([]string{lib}); len(m) > 0 {
					err = fmt.Errorf("the %s stack needs Debian's %s, not installed here (%s)", s.Name, lib, getBy)
					break
				}
			}
		}
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
