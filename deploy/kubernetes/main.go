package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// usageError is an error in the command line: exit status 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{fmt.Sprintf(format, args...)}
}

// run writes the manifest that args ask for to stdout, or to -o FILE;
// flags after the options (after --) are added to dbsock run's.
func run(args []string, stdout, stderr io.Writer) int {
	o, out, err := parse(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "dbsock-fleet: %v\n", err)
		if _, ok := errors.AsType[*usageError](err); ok {
			return 2
		}
		return 1
	}
	m, err := Manifest(o, command(args))
	if err == nil && out == "" {
		_, err = stdout.Write(m)
	} else if err == nil {
		err = os.WriteFile(out, m, 0o644)
		if err != nil {
			err = fmt.Errorf("write the manifest to %s: %w; give -o a file in a directory you may write, or leave -o out for stdout", out, err)
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "dbsock-fleet: %v\n", err)
		return 1
	}
	return 0
}

// parse reads the command line into the manifest's options and the file
// to write (empty: stdout).
func parse(args []string, stderr io.Writer) (Options, string, error) {
	o := Defaults
	var out string
	fs := flag.NewFlagSet("dbsock-fleet", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // a bad flag is one line, below
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: go run ./deploy/kubernetes [options] [-- dbsock run flags]\n\nWrites the Kubernetes Job that runs dbsock once on each of -nodes nodes.\n\n")
		fs.PrintDefaults()
	}
	fs.StringVar(&o.Name, "name", o.Name, "the Job's name")
	fs.IntVar(&o.Nodes, "nodes", o.Nodes, "how many nodes to measure, each once (the Job's completions and parallelism)")
	fs.StringVar(&o.DbsockImage, "dbsock-image", o.DbsockImage, "an image whose entrypoint is dbsock (FROM scratch, COPY a static dbsock)")
	fs.StringVar(&o.RedisImage, "redis-image", o.RedisImage, "the Redis server's image: the official redis image, or one that starts as it does")
	fs.Int64Var(&o.Deadline, "deadline", o.Deadline, "seconds the Job may run, pods waiting for a node included")
	fs.StringVar(&out, "o", "", "write the manifest to this file instead of stdout")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(stderr)
			fs.Usage()
			return o, "", err
		}
		return o, "", usagef("%v; see -h", firstLine(err.Error()))
	}
	o.RunFlags = fs.Args()
	return o, out, check(o)
}

// check refuses options no Job can be made of, saying what to give.
func check(o Options) error {
	if msgs := validation.IsDNS1123Label(o.Name); len(msgs) > 0 {
		return usagef("-name %q is not a Job name Kubernetes takes (%s); give lower-case letters, digits and '-', at most 63", o.Name, msgs[0])
	}
	if o.Nodes < 1 || o.Nodes > 10000 {
		return usagef("-nodes %d: give how many nodes to measure, 1 to 10000", o.Nodes)
	}
	if o.Deadline < 1 {
		return usagef("-deadline %d: give the seconds the Job may run, 1 or more", o.Deadline)
	}
	for _, image := range [][2]string{{"-dbsock-image", o.DbsockImage}, {"-redis-image", o.RedisImage}} {
		if image[1] == "" || strings.ContainsAny(image[1], " \t\n") {
			return usagef("%s %q: give an image reference (NAME:TAG)", image[0], image[1])
		}
	}
	return nil
}

// command is how the manifest was written, for its header: the -o file
// left out, as it is not part of what was written.
func command(args []string) string {
	words := []string{"go run ."}
	for i := 0; i < len(args); i++ {
		if args[i] == "-o" && i+1 < len(args) {
			i++
			continue
		}
		if strings.HasPrefix(args[i], "-o=") {
			continue
		}
		words = append(words, quote(args[i]))
	}
	return strings.Join(words, " ")
}

// quote is arg as a shell reads it back.
func quote(arg string) string {
	if arg != "" && strings.Trim(arg, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_=./:,@") == "" {
		return arg
	}
	return "'" + strings.ReplaceAll(arg, "'", `'\''`) + "'"
}

func firstLine(s string) string {
	first, _, _ := strings.Cut(s, "\n")
	return first
}
