package main

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/dbsock/dbsock/pipeline"
)

// countValue is an int flag that takes a count as a person writes it:
// 3000, 10k (thousands), 2M (millions), 1e4 or 10_000.
type countValue int

// countWords says what a count flag takes, for its errors and help.
const countWords = "a whole number such as 3000, 10k, 2M or 1e4"

func newCount(p *int, v int) *countValue {
	*p = v
	return (*countValue)(p)
}

func (c *countValue) String() string { return strconv.Itoa(int(*c)) }
func (c *countValue) Type() string   { return "count" }

func (c *countValue) Set(s string) error {
	n, err := parseCount(s)
	if err != nil {
		return err
	}
	*c = countValue(n)
	return nil
}

// parseCount reads a count (countValue): an amount that is a whole number.
func parseCount(s string) (int, error) {
	t := strings.ReplaceAll(strings.TrimSpace(s), "_", "")
	if n, err := strconv.Atoi(t); err == nil {
		return n, nil
	}
	v, err := parseAmount(s)
	if err != nil || v != math.Trunc(v) || math.Abs(v) > 1<<53 {
		return 0, errNotCount
	}
	return int(v), nil
}

// parseAmount reads a number as a person writes it, the one form of a
// count (--n) and a rate (--rate): 3000, 2.5k (thousands), 2M
// (millions), 1e4 or 10_000. NaN and infinities are not amounts.
func parseAmount(s string) (float64, error) {
	t := strings.ReplaceAll(strings.TrimSpace(s), "_", "")
	scale := 1.0
	switch {
	case strings.HasSuffix(t, "k") || strings.HasSuffix(t, "K"):
		t, scale = t[:len(t)-1], 1e3
	case strings.HasSuffix(t, "M"):
		t, scale = t[:len(t)-1], 1e6
	}
	f, err := strconv.ParseFloat(t, 64)
	v := f * scale
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, errNotAmount
	}
	return v, nil
}

// errNotAmount: parseAmount read no number.
var errNotAmount = errors.New("not a number")

var errNotCount = errors.New("not " + countWords)

// clientsValue is --clients: client stacks separated by commas, where a
// cmd:COMMAND entry runs to the end of the flag's value (a command may
// hold commas and quotes); repeatable.
type clientsValue struct {
	stacks  *[]string
	changed bool
}

func (c *clientsValue) String() string { return strings.Join(*c.stacks, ",") }
func (c *clientsValue) Type() string   { return "stacks" }

func (c *clientsValue) Set(s string) error {
	if !c.changed {
		*c.stacks, c.changed = nil, true // the first --clients replaces the default
	}
	*c.stacks = append(*c.stacks, splitClients(s)...)
	return nil
}

// splitClients splits one --clients value at its commas up to a
// cmd:COMMAND entry, which takes the rest of it.
func splitClients(s string) []string {
	var out []string
	for s != "" {
		if rest := strings.TrimLeft(s, " "); strings.HasPrefix(rest, "cmd:") {
			return append(out, rest)
		}
		head, tail, more := strings.Cut(s, ",")
		out = append(out, strings.TrimSpace(head))
		if !more {
			break
		}
		if tail == "" {
			out = append(out, "") // a trailing comma names an empty stack
		}
		s = tail
	}
	return out
}

// flagError turns cobra's flag errors into usage errors naming the
// command: a value a flag cannot take says what it takes, and a flag
// that does not exist suggests the nearest one.
func flagError(cmd *cobra.Command, err error) error {
	var iv *pflag.InvalidValueError
	var ne *pflag.NotExistError
	var numErr *strconv.NumError
	if run := runOf(cmd.Flags().Args()); run != "" && !cmd.HasParent() {
		return usagef("unknown command %q for %s: %s (see '%s run --help')", cmd.Flags().Args()[0], cmd.CommandPath(), run, cmd.CommandPath())
	}
	switch {
	case errors.As(err, &iv) && errors.Is(err, errNotCount):
		return usagef("--%s %q is not %s (see '%s --help')", iv.GetFlag().Name, iv.GetValue(), countWords, cmd.CommandPath())
	case errors.As(err, &iv) && errors.As(err, &numErr):
		return usagef("--%s %q is not %s (see '%s --help')", iv.GetFlag().Name, iv.GetValue(), numberWords(iv.GetFlag().Value.Type()), cmd.CommandPath())
	case errors.As(err, &ne) && ne.GetSpecifiedName() != "":
		var names []string
		cmd.Flags().VisitAll(func(f *pflag.Flag) { names = append(names, "--"+f.Name) })
		return usagef("%v%s (see '%s --help')", err, pipeline.DidYouMean("--"+ne.GetSpecifiedName(), names), cmd.CommandPath())
	}
	return usagef("%v (see '%s --help')", err, cmd.CommandPath())
}

// numberWords says what a numeric flag of pflag type typ takes.
func numberWords(typ string) string {
	switch {
	case strings.HasPrefix(typ, "float"):
		return "a number such as 0.5"
	case strings.HasSuffix(typ, "Slice"):
		return "a list of whole numbers such as 1,8,64"
	case strings.HasPrefix(typ, "uint"):
		return "a whole number of 0 or more"
	}
	return "a whole number such as 10"
}

// unknownWord is why word, an argument of cmd, is refused: not one of
// known, with the nearest of them suggested.
func unknownWord(what, word string, known []string) string {
	return fmt.Sprintf("unknown %s %q%s", what, word, pipeline.DidYouMean(word, known))
}
