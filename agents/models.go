package agents

import (
	"fmt"
	"slices"
	"strings"
)

// ModelWord is how --clients writes worker model m after a stack's name:
// the model without its hyphens (c:eventloop for event-loop).
func ModelWord(m string) string { return strings.ReplaceAll(m, "-", "") }

// Model is the worker model asked names among those stack declares (of
// the agents directory dir, "" for Dir's): asked itself, or written as
// ModelWord writes it; "" asks for the stack's default. The error names
// the models the stack has.
func Model(dir, stack, asked string) (string, error) {
	c, err := load(dir)
	if err != nil {
		return "", err
	}
	s, err := c.stack(stack)
	if err != nil {
		return "", err
	}
	models := s.AllModels()
	if asked == "" {
		return s.DefaultModel(), nil
	}
	if i := slices.IndexFunc(models, func(m string) bool { return m == asked || ModelWord(m) == asked }); i >= 0 {
		return models[i], nil
	}
	if len(models) == 0 {
		return "", fmt.Errorf("the %s stack has no worker model %q: its agent runs no load (its stack.json names no models)", stack, asked)
	}
	var have []string
	for _, m := range models {
		have = append(have, fmt.Sprintf("%s (%s:%s)", m, stack, ModelWord(m)))
	}
	return "", fmt.Errorf("the %s stack has no worker model %q: it has %s, the first its default", stack, asked, strings.Join(have, ", "))
}

// ModelNoConnect is why stack's worker model model (of the agents
// directory dir, "" for Dir's) does not time the connect scenario, or ""
// when it does or the stack says nothing of it.
func ModelNoConnect(dir, stack, model string) string {
	return Declared(dir, stack).ModelLimits[model].NoConnect
}

// ModelMissing is why stack's worker model model (of the agents
// directory dir, "" for Dir's) does not run library lib, or "" when it
// does.
func ModelMissing(dir, stack, model, lib string) string {
	return Declared(dir, stack).ModelMissing(model, lib)
}

// SplitStack reads a stack of the agents directory dir ("" for Dir's) as
// --clients names it, STACK, STACK:LIBRARY, STACK:MODEL or
// STACK:LIBRARY:MODEL: its name, its library ("" for each target's
// default) and its worker model as its stack.json names it ("" for its
// default). A word after the stack's name that names none of its models
// (Model) is its library.
func SplitStack(dir, c string) (stack, library, model string) {
	stack, rest, _ := strings.Cut(c, ":")
	if rest == "" {
		return stack, "", ""
	}
	for _, w := range strings.Split(rest, ":") {
		if m, err := Model(dir, stack, w); err == nil && model == "" {
			model = m
		} else if library == "" {
			library = w
		} else {
			library += ":" + w // no library's name: Library says so
		}
	}
	return stack, library, model
}
