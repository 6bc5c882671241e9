package pipeline

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/dustin/go-humanize"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/internal/setting"
	"github.com/dbsock/dbsock/results"
	"github.com/dbsock/dbsock/supply"
	"github.com/dbsock/dbsock/targets"
)

// KeySource is where a target's own keys come from (--keys-from): a
// query the server answers (Query), or a file already read (File, Keys).
type KeySource struct {
	Query string
	File  string
	Keys  []string
}

// String names the source as --keys-from takes it.
func (k KeySource) String() string {
	if k.Query != "" {
		return "query:" + k.Query
	}
	return k.File
}

// userKeys are t's own keys (nil: dbsock's ids 1..Rows): the file's, or
// what the query returns over the Unix endpoint, at most Plan.Workload.Rows (a
// query that has more is said in ti's warnings).
func (p Plan) userKeys(ctx context.Context, t *targets.Target, d drivers.Driver, srv *supply.Server, ti *results.Target) ([]string, error) {
	src, ok := p.Workload.KeysFrom[t.Name]
	if !ok {
		return nil, nil
	}
	if src.Query == "" {
		return distinct(src.Keys), nil
	}
	kl, ok := d.(drivers.KeyLister)
	if !ok {
		return nil, drivers.Statementf("%s query: %s cannot list keys; give a file of keys, one per line", setting.KeysFrom, t.Name)
	}
	limit := max(p.Workload.Rows, 1)
	// Read up to countKeys past what it keeps, to say how many it left out.
	upTo := max(limit+1, min(limit*100, countKeys))
	var keys []string
	err := p.answer(ctx, t.Name, srv.Unix(), "while dbsock read your keys", func(ctx context.Context) (err error) {
		keys, err = kl.ListKeys(ctx, srv.Unix(), src.Query, upTo)
		return err
	})
	switch {
	case err != nil:
		return nil, drivers.Statementf("%s query:%q over %s: %w", setting.KeysFrom, src.Query, srv.Unix(), err)
	case len(keys) == 0:
		return nil, drivers.Statementf("%s query:%q over %s returned no keys", setting.KeysFrom, src.Query, srv.Unix())
	}
	returned := len(keys)
	keys = distinct(keys[:min(len(keys), limit)])
	if returned > limit {
		of := humanize.Comma(int64(returned))
		if returned >= upTo {
			of = "at least " + humanize.Comma(int64(upTo)) // it read no further
		}
		kept := humanize.Comma(int64(limit))
		ti.Warnings = append(ti.Warnings, results.Warn(results.KeysCut, "Your keys query returned %s keys; dbsock kept the first %s of them (%s %d): raise %s to measure over more of them.",
			of, kept, setting.Rows, limit, setting.Rows))
		fmt.Fprintf(p.log(), "dbsock: %s: your keys query returned %s keys; dbsock kept the first %s of them (the rows asked for)\n", t.Name, of, kept)
	}
	fmt.Fprintf(p.log(), "dbsock: %s: read %d keys of your own\n", t.Name, len(keys))
	return keys, nil
}

// countKeys is how many keys of a --keys-from query dbsock reads at most
// to say how many it left out.
const countKeys = 1_000_000

// distinct is keys without repeats, in their first order: a key named
// twice (a key-value server's scan may return one twice) is one row.
func distinct(keys []string) []string {
	seen := make(map[string]bool, len(keys))
	out := keys[:0:0]
	for _, k := range keys {
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}

// checkStatement runs the user's op (--query, or dbsock's op on the user's
// keys) once over each transport before anything is timed: one that fails
// or returns nothing stops the run with the server's own message.
func (p Plan) checkStatement(ctx context.Context, t *targets.Target, d drivers.Driver, srv *supply.Server) error {
	q, hasQuery := p.Workload.Queries[t.Name]
	if _, hasKeys := p.Workload.KeysFrom[t.Name]; !hasQuery && !hasKeys {
		return nil
	}
	fail := func(ep drivers.Endpoint, err error) error { return drivers.StatementError(q, ep, err) }
	if !hasQuery {
		fail = func(ep drivers.Endpoint, err error) error {
			return drivers.Statementf("dbsock's own op (%s) on your first key (%s) over %s: %v; give keys that name what it reads, or your own op (%s)", d.Describe(), setting.KeysFrom, ep, err, setting.Queries)
		}
	}
	for _, ep := range []drivers.Endpoint{srv.TCP(), srv.Unix()} {
		err := drivers.Within(ctx, p.Loop.Timeout(), func(ctx context.Context) error {
			conn, err := d.Open(ctx, ep)
			if err != nil {
				return err
			}
			defer conn.Close()
			if kc, ok := conn.(drivers.Keyed); ok {
				kc.UseKeys([]int64{1})
			}
			return conn.Do(ctx)
		})
		switch {
		case err == nil:
		case errors.Is(err, drivers.ErrStatement):
			return err
		case errors.Is(err, context.DeadlineExceeded):
			return fail(ep, setting.Err("no answer within %s (%s)", p.Loop.Timeout().Round(time.Millisecond), setting.OpTimeout))
		default:
			return fail(ep, err)
		}
	}
	return nil
}
