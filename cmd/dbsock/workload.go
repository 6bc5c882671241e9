package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/pipeline"
	"github.com/dbsock/dbsock/scenarios"
	"github.com/dbsock/dbsock/targets"
)

// maxUserKeys bounds the keys --keys-from reads (held in memory as text).
const (
	maxUserKeys = 5_000_000
	maxKeyLine  = 1 << 20 // the longest line --keys-from reads
)

// workloadOptions are the flags that say what the ops do.
type workloadOptions struct {
	rows         int
	keysSpec     string
	keys         scenarios.Keys
	opSpec       string
	op           string
	mix          scenarios.Mix
	allowWrites  bool
	maxErrorSpec string
	maxErrorRate float64
	querySpecs   []string
	keysFromSpec []string
	// queries and keysFrom are --query and --keys-from by target.
	queries  map[string]string
	keysFrom map[string]pipeline.KeySource
}

func (w *workloadOptions) bind(f *pflag.FlagSet) {
	f.Var(newCount(&w.rows, 10000), "rows", "rows (keys) dbsock seeds and the ops read, ids 1..ROWS; 1 reads one row, as a single hot cache line (with --keys-from: at most this many of your keys); "+countWords)
	f.StringVar(&w.opSpec, "op", drivers.OpRead, "what each op does to its row: read (its value), update (its counter up by one: "+
		perTarget(func(h targets.Help) string { return h.Update })+"), or mixed:R/W (R reads to W updates, interleaved, e.g. mixed:95/5; reads and updates reported apart)")
	f.StringVar(&w.maxErrorSpec, "max-error-rate", "1%", "fail the run (exit 1) when more than this share of a case's ops failed on either transport, e.g. 0.1% or 0")
	f.BoolVar(&w.allowWrites, "allow-writes", false, "let --op update and mixed write to servers dbsock did not start (to dbsock's own table, keys or collection, or with --query your statement)")
	f.StringVar(&w.keysSpec, "keys", scenarios.Uniform, "how the ops choose rows: uniform, zipf[:THETA] (YCSB's scrambled zipfian, theta 0.99), sequential, hotspot:FRACTION[:OPS]; drawn from --seed before timing, the same for both blocks of a pair")
	f.StringArrayVar(&w.querySpecs, "query", nil, "[TARGET=]your own op instead of dbsock's lookup, with one key placeholder ("+
		perTarget(func(h targets.Help) string { return h.Query })+"); repeat with TARGET= for several targets")
	f.StringArrayVar(&w.keysFromSpec, "keys-from", nil, "[TARGET=]your own keys instead of ids 1..ROWS, and dbsock creates no table: a file (one key per line) or query:TEXT ("+
		perTarget(func(h targets.Help) string { return h.KeysQuery })+")")
}

// parse reads the workload flags; --rows and --keys given for targets that
// read no rows (dbsock's own servers) are refused. Whether the workload can
// run is the plan's to say.
func (w *workloadOptions) parse(f *pflag.FlagSet, names []string) error {
	rate, err := parsePercent(w.maxErrorSpec)
	if err != nil || rate < 0 || rate > pipeline.ErrorRateLimit {
		return usagef("--max-error-rate %q is not a share from 0%% to %g%%, such as 1%% or 0.01", w.maxErrorSpec, pipeline.ErrorRateLimit*100)
	}
	w.maxErrorRate = rate
	k, err := scenarios.ParseKeys(w.keysSpec)
	if err != nil {
		return usagef("%s", inWords(err))
	}
	w.keys = k
	if w.op, w.mix, err = scenarios.ParseOp(w.opSpec); err != nil {
		return usagef("%s", inWords(err))
	}
	if err := w.parseScoped(names); err != nil {
		return err
	}
	if f == nil || (!f.Changed("rows") && !f.Changed("keys") && w.op == drivers.OpRead && len(w.queries) == 0 && len(w.keysFrom) == 0) {
		return nil
	}
	var own []string
	for _, name := range names {
		if t, ok := targets.Lookup(name); ok && t.Own {
			own = append(own, name)
		}
	}
	if len(own) == len(names) {
		return usagef("--rows, --keys, --op, --query and --keys-from choose rows of a database and what to do to them; %s read no rows (they are dbsock's own servers)", strings.Join(own, ", "))
	}
	return nil // with database targets in the run, dbsock's own ignore them
}

// scoped splits "[TARGET=]TEXT" of a per-target flag: the target named
// before the first "=" (when that is a target name), else the run's one
// database target.
func scoped(flag, spec string, names []string) (string, string, error) {
	if name, text, ok := strings.Cut(spec, "="); ok {
		if _, known := targets.Lookup(name); known {
			if !slices.Contains(names, name) {
				return "", "", usagef("--%s %q is for target %s, which this run does not measure (it runs %s)", flag, spec, name, strings.Join(names, ", "))
			}
			return name, text, nil
		}
	}
	var dbs []string
	for _, name := range names {
		if t, ok := targets.Lookup(name); ok && !t.Own {
			dbs = append(dbs, name)
		}
	}
	if len(dbs) == 0 {
		return "", "", usagef("--%s %q: this run measures no database target (%s: dbsock's own servers take no --%s); add the one it is for, e.g. dbsock run mysql --%s ...",
			flag, spec, strings.Join(names, ", "), flag, flag)
	}
	if len(dbs) != 1 {
		return "", "", usagef("--%s %q: this run measures %d database targets (%s); say which one it is for, e.g. --%s '%s=...'",
			flag, spec, len(dbs), strings.Join(dbs, ", "), flag, dbs[0])
	}
	return dbs[0], spec, nil
}

// parseScoped reads --query and --keys-from by target.
func (w *workloadOptions) parseScoped(names []string) error {
	w.queries, w.keysFrom = map[string]string{}, map[string]pipeline.KeySource{}
	for _, spec := range w.querySpecs {
		name, q, err := scoped("query", spec, names)
		if err != nil {
			return err
		}
		if _, dup := w.queries[name]; dup {
			return usagef("--query is given twice for %s; give one", name)
		}
		if strings.TrimSpace(q) == "" {
			return usagef("--query for %s is empty", name)
		}
		w.queries[name] = strings.TrimSpace(q)
	}
	for _, spec := range w.keysFromSpec {
		name, src, err := scoped("keys-from", spec, names)
		if err != nil {
			return err
		}
		if _, dup := w.keysFrom[name]; dup {
			return usagef("--keys-from is given twice for %s; give one", name)
		}
		ks, err := w.keySource(name, src)
		if err != nil {
			return err
		}
		w.keysFrom[name] = ks
	}
	return nil
}

// keySource reads one --keys-from: query:TEXT, asked of the server later,
// or a file of keys, read now (at most --rows of them).
func (w *workloadOptions) keySource(target, src string) (pipeline.KeySource, error) {
	if w.rows > maxUserKeys {
		return pipeline.KeySource{}, usagef("--keys-from reads at most %d of your keys, and --rows %d asks for more; lower --rows", maxUserKeys, w.rows)
	}
	if q, ok := strings.CutPrefix(src, "query:"); ok {
		if strings.TrimSpace(q) == "" {
			return pipeline.KeySource{}, usagef("--keys-from query: for %s has no query", target)
		}
		return pipeline.KeySource{Query: strings.TrimSpace(q)}, nil
	}
	if fi, err := os.Stat(src); err == nil && !fi.Mode().IsRegular() {
		// A FIFO would hold dbsock until a writer comes; a device never ends.
		return pipeline.KeySource{}, usagef("--keys-from %q for %s is not a regular file (%s); give a file of keys, one per line, or query:TEXT", src, target, fi.Mode().Type())
	}
	f, err := os.Open(src)
	if err != nil {
		return pipeline.KeySource{}, usagef("--keys-from %q for %s: %v; give a file of keys, one per line, or query:TEXT", src, target, err)
	}
	defer f.Close()
	var keys []string
	size, line := 0, 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), maxKeyLine)
	for len(keys) < w.rows && sc.Scan() {
		line++
		text := sc.Text()
		if line == 1 {
			text = strings.TrimPrefix(text, "\uFEFF") // a byte order mark is not part of the key
		}
		if k := strings.TrimSpace(text); k != "" {
			if size += len(k); size > drivers.MaxKeyBytes {
				return pipeline.KeySource{}, usagef("%v", drivers.KeysTooLarge(fmt.Sprintf("--keys-from %q for %s", src, target), len(keys)+1))
			}
			keys = append(keys, k)
		}
	}
	if err := sc.Err(); errors.Is(err, bufio.ErrTooLong) {
		return pipeline.KeySource{}, usagef("--keys-from %q for %s: line %d is longer than %d KiB, the longest key dbsock reads; give one key per line", src, target, line+1, maxKeyLine>>10)
	} else if err != nil {
		return pipeline.KeySource{}, usagef("--keys-from %q for %s: %v", src, target, err)
	}
	if len(keys) == 0 {
		return pipeline.KeySource{}, usagef("--keys-from %q for %s holds no keys (one per line)", src, target)
	}
	return pipeline.KeySource{File: src, Keys: keys}, nil
}

// perTarget lists what of says of each registered target, the targets that
// say the same together: "a: X; b, c: Y".
func perTarget(of func(targets.Help) string) string {
	var texts []string
	names := map[string][]string{}
	for _, t := range targets.List() {
		text := of(t.Help)
		if text == "" {
			continue
		}
		if names[text] == nil {
			texts = append(texts, text)
		}
		names[text] = append(names[text], t.Name)
	}
	parts := make([]string, len(texts))
	for i, text := range texts {
		parts[i] = strings.Join(names[text], ", ") + ": " + text
	}
	return strings.Join(parts, "; ")
}
