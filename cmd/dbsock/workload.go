package main

import (
	"strings"

	"github.com/spf13/pflag"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/scenarios"
	"github.com/dbsock/dbsock/targets"
)

// maxRows bounds --rows: a zipfian keyspace's constant is summed over
// every row before timing.
const maxRows = 100_000_000

// workloadOptions are the flags that say what the ops read.
type workloadOptions struct {
	rows         int
	keysSpec     string
	keys         scenarios.Keys
	op           string
	allowWrites  bool
	maxErrorSpec string
	maxErrorRate float64
}

func (w *workloadOptions) bind(f *pflag.FlagSet) {
	f.IntVar(&w.rows, "rows", 10000, "rows (keys) dbsock seeds and the ops read, ids 1..ROWS; 1 reads one row, as a single hot cache line")
	f.StringVar(&w.op, "op", drivers.OpRead, "what each op does to its row: read (its value), or update (its counter up by one: UPDATE ... SET n = n + 1, INCR, $inc, incr)")
	f.StringVar(&w.maxErrorSpec, "max-error-rate", "1%", "fail the run (exit 1) when more than this share of a case's ops failed on either transport, e.g. 0.1% or 0")
	f.BoolVar(&w.allowWrites, "allow-writes", false, "let --op update write to servers dbsock did not start (only to the table, keys or collection dbsock creates)")
	f.StringVar(&w.keysSpec, "keys", scenarios.Uniform, "how the ops choose rows: uniform, zipf[:THETA] (YCSB's scrambled zipfian, theta 0.99), sequential, hotspot:FRACTION[:OPS]; drawn from --seed before timing, the same for both blocks of a pair")
}

// validate checks the flags; --rows and --keys given for targets that read
// no rows (dbsock's own servers) are refused.
func (w *workloadOptions) validate(f *pflag.FlagSet, names []string) error {
	if err := intRange("rows", w.rows, 1, maxRows); err != nil {
		return err
	}
	rate, err := parsePercent(w.maxErrorSpec)
	if err != nil || rate < 0 || rate > 1 {
		return usagef("--max-error-rate %q is not a share from 0%% to 100%%, such as 1%% or 0.01", w.maxErrorSpec)
	}
	w.maxErrorRate = rate
	k, err := scenarios.ParseKeys(w.keysSpec)
	if err != nil {
		return usagef("%v", err)
	}
	w.keys = k
	if w.op != drivers.OpRead && w.op != drivers.OpUpdate {
		return usagef("--op %q is not accepted; use read or update", w.op)
	}
	if f == nil || (!f.Changed("rows") && !f.Changed("keys") && w.op == drivers.OpRead) {
		return nil
	}
	var own []string
	for _, name := range names {
		if t, ok := targets.Lookup(name); ok && t.Own {
			own = append(own, name)
		}
	}
	if len(own) == len(names) {
		return usagef("--rows, --keys and --op choose rows of a database and what to do to them; %s read no rows (they are dbsock's own servers)", strings.Join(own, ", "))
	}
	return nil // with database targets in the run, dbsock's own ignore them
}

// checkWrites refuses --op update against servers the user runs (their
// endpoints given) unless --allow-writes says so.
func (w *workloadOptions) checkWrites(names []string, given map[string]bool, pipelines []int) error {
	if w.op != drivers.OpUpdate {
		return nil
	}
	for _, d := range pipelines {
		if d > 1 {
			return usagef("--op update times one write per op; leave out --pipeline")
		}
	}
	if w.allowWrites {
		return nil
	}
	for _, name := range names {
		if given[name] {
			return usagef("--op update would write to the %s server you run (dbsock's own table, keys or collection only); add --allow-writes to let it", name)
		}
	}
	return nil
}
