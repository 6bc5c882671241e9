package main

import (
	"strings"

	"github.com/spf13/pflag"

	"github.com/dbsock/dbsock/scenarios"
	"github.com/dbsock/dbsock/targets"
)

// maxRows bounds --rows: a zipfian keyspace's constant is summed over
// every row before timing.
const maxRows = 100_000_000

// workloadOptions are the flags that say what the ops read.
type workloadOptions struct {
	rows     int
	keysSpec string
	keys     scenarios.Keys
}

func (w *workloadOptions) bind(f *pflag.FlagSet) {
	f.IntVar(&w.rows, "rows", 10000, "rows (keys) dbsock seeds and the ops read, ids 1..ROWS; 1 reads one row, as a single hot cache line")
	f.StringVar(&w.keysSpec, "keys", scenarios.Uniform, "how the ops choose rows: uniform, zipf[:THETA] (YCSB's scrambled zipfian, theta 0.99), sequential, hotspot:FRACTION[:OPS]; drawn from --seed before timing, the same for both blocks of a pair")
}

// validate checks the flags; --rows and --keys given for targets that read
// no rows (dbsock's own servers) are refused.
func (w *workloadOptions) validate(f *pflag.FlagSet, names []string) error {
	if err := intRange("rows", w.rows, 1, maxRows); err != nil {
		return err
	}
	k, err := scenarios.ParseKeys(w.keysSpec)
	if err != nil {
		return usagef("%v", err)
	}
	w.keys = k
	if f == nil || (!f.Changed("rows") && !f.Changed("keys")) {
		return nil
	}
	var own []string
	for _, name := range names {
		if t, ok := targets.Lookup(name); ok && t.Own {
			own = append(own, name)
		}
	}
	if len(own) == len(names) {
		return usagef("--rows and --keys choose rows of a database; %s read no rows (they are dbsock's own servers)", strings.Join(own, ", "))
	}
	return nil // with database targets in the run, dbsock's own ignore them
}
