package drivers

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/dbsock/dbsock/internal/setting"
)

// Workload is what one case's ops do: the size of a value, the keyspace
// Seed creates (or the user's own keys), what each op does to its row, and
// the user's own statement, if any.
type Workload struct {
	// ValueSize is the size in bytes of the value one op reads (0: the
	// target's own small value).
	ValueSize int
	// Rows is how many rows (or keys) Seed creates, with ids 1..Rows
	// (0 means 1: the single row of a one-row lookup).
	Rows int
	// Progress, when set, is told how many rows Seed has written so far.
	Progress func(done int)
	// Op is what each op does to its row: OpRead ("" too) reads its value,
	// OpUpdate increments its counter (n) by one, OpMixed does either, as
	// the scenario hands it (Keyed's write).
	Op string
	// Query is the user's own op (--query), "" for dbsock's, with one
	// placeholder for the key as its target writes it (targets.Target's
	// Query): SQL with a placeholder, a command template or a filter with
	// {key}. Under OpRead it must return something; under OpUpdate it
	// is the write.
	Query string
	// Keys, when set, are the user's own keys (--keys-from): row id i is
	// Keys[i-1], and Seed creates nothing.
	Keys []string
}

// Ops: what an op does to its row.
const (
	OpRead   = "read"
	OpUpdate = "update"
	// OpMixed reads some rows and updates others, in a share the scenario
	// draws (--op mixed:R/W).
	OpMixed = "mixed"
)

// Updates says whether every op of w writes.
func (w Workload) Updates() bool { return w.Op == OpUpdate }

// Writes says whether any op of w writes.
func (w Workload) Writes() bool { return w.Op == OpUpdate || w.Op == OpMixed }

// Seeds says whether Seed creates the keyspace: not when the keys are the
// user's own.
func (w Workload) Seeds() bool { return w.Keys == nil }

// RowCount is how many rows the ops choose from, at least 1.
func (w Workload) RowCount() int {
	if w.Keys != nil {
		return max(len(w.Keys), 1)
	}
	return max(w.Rows, 1)
}

// Report tells Progress (if set) that done rows are written.
func (w Workload) Report(done int) {
	if w.Progress != nil {
		w.Progress(done)
	}
}

// Key is row id's key as text: the user's key (--keys-from) or the id in
// decimal.
func (w Workload) Key(id int64) string {
	if w.Keys != nil && id >= 1 && id <= int64(len(w.Keys)) {
		return w.Keys[id-1]
	}
	return strconv.FormatInt(id, 10)
}

// Arg is row id's key as a statement's argument: an int64 when the key is
// an integer, else the text.
func (w Workload) Arg(id int64) any {
	k := w.Key(id)
	if n, err := strconv.ParseInt(k, 10, 64); err == nil {
		return n
	}
	return k
}

// Placeholder marks where a command template or filter (--query) takes
// the key.
const Placeholder = "{key}"

// Fill puts key into template in place of each Placeholder.
func Fill(template, key string) string { return strings.ReplaceAll(template, Placeholder, key) }

// ErrStatement is wrapped by the errors of a user's own statement or keys
// that fail before anything is timed (--query, --keys-from): the command
// exits 2 with the server's own message.
var ErrStatement = errors.New("statement check failed")

// StatementError says that q, run once over ep before timing, failed;
// it wraps err and is ErrStatement.
func StatementError(q string, ep Endpoint, err error) error {
	return &statementError{err: setting.Err("your %s %q over %s: %w; correct the statement (or %s)", setting.Queries, q, ep, err, setting.KeysFrom)}
}

// Statementf is an ErrStatement of its own words.
func Statementf(format string, args ...any) error {
	return &statementError{err: setting.Err(format, args...)}
}

type statementError struct{ err error }

func (e *statementError) Error() string        { return e.err.Error() }
func (e *statementError) Unwrap() error        { return e.err }
func (e *statementError) Is(target error) bool { return target == ErrStatement }

// ErrNoResult is an op's error when the user's read statement returned
// nothing for a key.
var ErrNoResult = errors.New("returned nothing")

// Keyed is an optional capability of a Conn whose op reads (or writes)
// one of many rows. UseKeys hands it, before timing, the row ids (1..Rows)
// its next ops use (none: the one-row lookup), which it turns into its own
// form there and then, so that nothing is converted or allocated while ops
// are timed. DoKey performs one op on the key at index i of them: the
// scenario's loop says which, and the conn keeps no cursor of its own. write
// says that this op of an OpMixed workload updates its row rather than
// reads it; other workloads do what their Op says. A pipelined conn's op
// takes the keys from i on, one per lookup (KeyAt wraps them).
type Keyed interface {
	UseKeys(ids []int64)
	DoKey(ctx context.Context, i int, write bool) error
}

// KeyLister is an optional capability of a Driver that can read the
// user's keys from the server (--keys-from query:...): ListKeys runs query
// over ep and returns at most limit keys, as text.
type KeyLister interface {
	ListKeys(ctx context.Context, ep Endpoint, query string, limit int) ([]string, error)
}

// KeyAt is index i of n keys, starting over after n (0 when there are
// none): the key of a pipelined op's lookup i.
func KeyAt(i, n int) int {
	if n <= 0 {
		return 0
	}
	return i % n
}

// KeyName is the key of row id in a key-value server: "dbsock:user:ID".
func KeyName(id int64) string { return "dbsock:user:" + strconv.FormatInt(id, 10) }

// IDText is how an operation's description names the row it reads: one,
// when the workload has one row, else ID.
func IDText(w Workload, one int64) string {
	if w.RowCount() == 1 && w.Keys == nil {
		return strconv.FormatInt(one, 10)
	}
	return "ID"
}

// KeyText is KeyName for an operation's description: KeyName(1) when the
// workload has one row, else with ID for the id.
func KeyText(w Workload) string {
	if w.RowCount() == 1 {
		return KeyName(1)
	}
	return "dbsock:user:ID"
}

// RowLimiter is an optional capability of a Driver whose server reads a
// large keyspace too slowly to measure the transport: RowLimit says, for
// the server Info named, how many rows a run reads at most, and why (0: no
// limit): a sentence without its full stop, which the report's warning
// ends with the rows asked for.
type RowLimiter interface {
	RowLimit(ServerInfo) (rows int, why string)
}

// KeyNames appends to names the key of each id (its counter's with
// update), or of row 1 when there are none: a key-value conn's UseKeys.
func KeyNames(names []string, ids []int64, update bool) []string {
	name := KeyName
	if update {
		name = CounterName
	}
	if len(ids) == 0 {
		return append(names, name(1))
	}
	for _, id := range ids {
		names = append(names, name(id))
	}
	return names
}

// CounterName is the key of row id's counter (--op update) in a key-value
// server: "dbsock:user:ID:n".
func CounterName(id int64) string { return KeyName(id) + ":n" }

// Rows is what ScanKeys reads: database/sql's and pgx's rows both have it.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}

// MaxKeyBytes bounds the text of the user's keys (--keys-from) that dbsock
// holds: with the strings' own overhead, 5,000,000 keys of this much text
// stay well under 1 GB.
const MaxKeyBytes = 64 << 20

// KeysTooLarge is the error of keys whose text passes MaxKeyBytes.
func KeysTooLarge(source string, n int) error {
	return Statementf("%s holds more than %d MiB of key text by key %d, the most dbsock keeps in memory; lower %s (or give shorter keys)", source, MaxKeyBytes>>20, n, setting.Rows)
}

// ScanKeys reads the first column of every row as text, at most limit of
// them and MaxKeyBytes of text, and closes rows (when it has a Close
// method).
func ScanKeys(rows Rows, limit int) ([]string, error) {
	defer func() {
		switch r := rows.(type) {
		case interface{ Close() error }:
			r.Close()
		case interface{ Close() }:
			r.Close()
		}
	}()
	keys, size := []string{}, 0
	for len(keys) < limit && rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			return nil, fmt.Errorf("key %d: %w (the query's first column must be the key)", len(keys)+1, err)
		}
		if size += len(k); size > MaxKeyBytes {
			return nil, KeysTooLarge("the keys query's result", len(keys)+1)
		}
		keys = append(keys, k)
	}
	return keys, rows.Err()
}

// QueryTaker is an optional capability of a Driver that takes the user's
// own op (--query): CheckQuery says what is wrong with q for op (OpRead or
// OpUpdate), before any server is asked (nil: nothing).
type QueryTaker interface {
	CheckQuery(q, op string) error
}

// CheckSQL is CheckQuery for SQL with placeholder ph ("?", "$1"): exactly
// one placeholder, and a SELECT (or WITH) under OpRead, not under
// OpUpdate.
func CheckSQL(target, q, op, ph string) error {
	if n := strings.Count(q, ph); n != 1 {
		return fmt.Errorf("%q has %d %s placeholders; give one, for the key (e.g. SELECT name FROM users WHERE id = %s)", q, n, ph, ph)
	}
	if ph == "$1" && strings.Contains(q, "$2") {
		return fmt.Errorf("%q has a $2; give one placeholder, $1, for the key", q)
	}
	first := LeadingWord(q)
	reads := first == "SELECT" || first == "WITH"
	switch {
	case op == OpRead && !reads:
		return setting.Err("%q is not a SELECT; a write needs %s %s (and %s against your own server)", q, setting.Op, OpUpdate, setting.AllowWrites)
	case op == OpUpdate && first == "SELECT":
		return setting.Err("%q is a SELECT, and %s %s times writes; leave out %s %s", q, setting.Op, OpUpdate, setting.Op, OpUpdate)
	}
	return nil
}

// LeadingWord is the first word of SQL statement q, in upper case, after
// white space, comments (/* */ and --) and opening parentheses: "SELECT"
// for "(SELECT 1)" and for "/* why */ SELECT 1".
func LeadingWord(q string) string {
	for {
		q = strings.TrimLeft(q, " \t\r\n(")
		switch {
		case strings.HasPrefix(q, "/*"):
			end := strings.Index(q, "*/")
			if end < 0 {
				return ""
			}
			q = q[end+2:]
		case strings.HasPrefix(q, "--"):
			end := strings.IndexByte(q, '\n')
			if end < 0 {
				return ""
			}
			q = q[end+1:]
		default:
			end := strings.IndexFunc(q, func(r rune) bool { return !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z') })
			if end < 0 {
				end = len(q)
			}
			return strings.ToUpper(q[:end])
		}
	}
}

// CheckKeysSQL says what is wrong with q as a query that lists keys
// (--keys-from query:): it must read (SELECT, WITH, VALUES or TABLE). The
// server runs it in a read-only transaction as well, which refuses what a
// read hides (a function that writes, a data-modifying WITH).
func CheckKeysSQL(target, q string) error {
	switch LeadingWord(q) {
	case "SELECT", "WITH", "VALUES", "TABLE":
		return nil
	}
	return Statementf("%s %s query %q does not read (it must be a SELECT, WITH, VALUES or TABLE statement): dbsock never writes to list keys", target, setting.KeysFrom, q)
}

// ReadsYourQuery says that w's ops are the user's own statement under
// --op read: drivers that can make their connections read-only do, so
// that a statement that writes is refused by the server.
func (w Workload) ReadsYourQuery() bool { return w.Query != "" && !w.Writes() }

// ReadStatement is the statement of w's reads: "" under OpUpdate (no op
// reads), the user's Query, or own, dbsock's lookup.
func (w Workload) ReadStatement(own string) string {
	switch {
	case w.Updates():
		return ""
	case w.Query != "":
		return w.Query
	}
	return own
}

// WriteStatement is the statement of w's writes: "" unless some op
// writes, the user's Query under OpUpdate, or own, dbsock's update.
func (w Workload) WriteStatement(own string) string {
	switch {
	case !w.Writes():
		return ""
	case w.Query != "" && w.Updates():
		return w.Query
	}
	return own
}

// DescribeStatements names a SQL driver's statements for its Describe:
// each in backquotes with placeholder ph shown as the row's id, "or"
// between the read and the write, and "(your own query)" for the user's.
func DescribeStatements(w Workload, ph string, one int64, stmts ...string) string {
	var qs []string
	for _, q := range stmts {
		if q != "" {
			qs = append(qs, "`"+strings.Replace(q, ph, IDText(w, one), 1)+"`")
		}
	}
	s := strings.Join(qs, " or ")
	if w.Query != "" {
		s += " (your own query)"
	}
	return s
}

// EndpointVerifier is an optional capability of a Driver that can verify
// an endpoint's transport on a connection of its own that needs nothing
// seeded (its Open prepares statements on dbsock's table).
type EndpointVerifier interface {
	VerifyEndpoint(ctx context.Context, ep Endpoint) (Verification, error)
}

// VerifyEndpoint asks the server, over a connection of d's own on ep,
// which transport it sees, and fails unless it is ep's.
func VerifyEndpoint(ctx context.Context, d Driver, ep Endpoint) (Verification, error) {
	if ev, ok := d.(EndpointVerifier); ok {
		v, err := ev.VerifyEndpoint(ctx, ep)
		if err == nil && v.Transport == ep.Transport.Seen() {
			v.Transport = ep.Transport // a control: the server sees the path it repeats
		}
		if err == nil && v.Transport != ep.Transport {
			err = fmt.Errorf("%w: connected over %s but the server reports %s (%s)", ErrMismatch, ep.Transport, v.Transport, v.Evidence)
		}
		return v, err
	}
	c, err := d.Open(ctx, ep)
	if err != nil {
		return Verification{}, err
	}
	defer c.Close()
	return CheckTransport(ctx, c, ep)
}
