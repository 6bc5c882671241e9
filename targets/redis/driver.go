// Package redis is dbsock's driver for Redis, built on
// github.com/redis/go-redis/v9.
package redis

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/internal/setting"
)

// Quiet stops go-redis from logging on its own (e.g. each failed dial):
// dbsock reports every error itself, once, with context. It changes a
// process-wide setting, so commands call it, not libraries.
func Quiet() { goredis.SetLogger(quietLogger{}) }

type quietLogger struct{}

func (quietLogger) Printf(context.Context, string, ...any) {}

// Key is the key of row 1, the one a one-row lookup reads (row id's key is
// drivers.KeyName(id)); Value is what every key holds.
const (
	Key   = "dbsock:user:1"
	Value = "dbsock"
)

// Driver is the Redis driver for one protocol and value size.
type Driver struct {
	protocol  int  // 2 or 3
	identity  bool // send CLIENT SETINFO on connect
	valueSize int  // 0: the 6-byte Value
	w         drivers.Workload
	depth     int  // lookups per op, pipelined (0 or 1: one)
	noHello   bool // answer go-redis's HELLO on the client's side (WithoutHello)
}

// Pipeline implements drivers.Pipeliner: each op sends depth GETs in one
// go-redis pipeline (one write, one read of all the replies).
func (d *Driver) Pipeline(depth int) drivers.Driver {
	c := *d
	c.depth = depth
	return &c
}

// Depth implements drivers.Pipeliner.
func (d *Driver) Depth() int { return max(d.depth, 1) }

// New returns the Redis driver speaking RESP protocol (3 when 0), sending
// the client identity commands on connect when identity is set, and reading
// values of w.ValueSize bytes (Value when 0) from w.Rows keys.
func New(protocol int, identity bool, w drivers.Workload) *Driver {
	if protocol == 0 {
		protocol = 3
	}
	return &Driver{protocol: protocol, identity: identity, valueSize: w.ValueSize, w: w}
}

// Name implements drivers.Driver.
func (*Driver) Name() string { return name }

// Mode implements drivers.Driver: "resp2" or "resp3", "+identity" when the
// client identity commands are sent.
func (d *Driver) Mode() string {
	m := fmt.Sprintf("resp%d", d.protocol)
	if d.identity {
		m += "+identity"
	}
	return m
}

// ValueSize implements drivers.Driver.
func (d *Driver) ValueSize() int {
	if d.valueSize == 0 {
		return len(Value)
	}
	return d.valueSize
}

func (d *Driver) value() string {
	if d.valueSize == 0 {
		return Value
	}
	return strings.Repeat("d", d.valueSize)
}

// Describe implements drivers.Driver.
func (d *Driver) Describe() string {
	if n := d.Depth(); n > 1 {
		what := "`GET " + drivers.KeyText(d.w) + "`"
		switch {
		case d.w.Query != "":
			what = "`" + d.w.Query + "` (your own query)"
		case d.w.Updates():
			what = "`INCR " + drivers.KeyText(d.w) + ":n`"
		case d.w.Writes():
			what = "`GET " + drivers.KeyText(d.w) + "` or `INCR " + drivers.KeyText(d.w) + ":n`"
		}
		return fmt.Sprintf("%d pipelined %s (one round trip per op of %d commands)", n, what, n)
	}
	switch {
	case d.w.Query != "":
		return "`" + d.w.Query + "` (your own query, one round trip per op)"
	case d.w.Updates():
		return "`INCR " + drivers.KeyText(d.w) + ":n` (one round trip per op)"
	case d.w.Writes():
		return "`GET " + drivers.KeyText(d.w) + "` or `INCR " + drivers.KeyText(d.w) + ":n` (one round trip per op)"
	}
	return "`GET " + drivers.KeyText(d.w) + "` (one round trip per op)"
}

// ConnectPhase implements drivers.Driver.
func (d *Driver) ConnectPhase() string {
	s := "connect"
	switch {
	case d.noHello:
		s += ", AUTH when there is a password (go-redis's HELLO answered by dbsock's client, as a server without HELLO would: the server takes none)"
	case d.protocol == 3:
		s += ", HELLO 3 (with AUTH when there is a password)"
	default:
		s += ", AUTH when there is a password"
	}
	if d.identity {
		s += ", two CLIENT SETINFO"
	}
	return s + ", and a PING"
}

// Options maps an endpoint to go-redis options for a pool of one.
func (d *Driver) Options(ep drivers.Endpoint) *goredis.Options {
	o := Options(ep)
	o.Protocol = d.protocol
	o.DisableIdentity = !d.identity
	o.Dialer = d.dialer(o.Dialer)
	return o
}

// Options maps an endpoint to go-redis options for a pool of one, RESP3,
// without the identity commands.
func Options(ep drivers.Endpoint) *goredis.Options {
	return &goredis.Options{
		Network:         ep.Transport.Network(),
		Addr:            ep.Address,
		TLSConfig:       ep.TLS,
		Username:        ep.User,
		Password:        ep.Password,
		PoolSize:        1,
		MaxIdleConns:    1,
		DialTimeout:     10 * time.Second,
		ReadTimeout:     10 * time.Second,
		WriteTimeout:    10 * time.Second,
		DisableIdentity: true,
		// No retries: a retried command would be timed as one slow op, and
		// a server that stopped answering would be asked again and again.
		MaxRetries: -1,
		// Redis before 8 answers the maintenance-notifications probe with an
		// error; it adds nothing to a lookup benchmark.
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled},
	}
}

func dial(ctx context.Context, o *goredis.Options, ep drivers.Endpoint) (*goredis.Client, *goredis.Conn, error) {
	client := goredis.NewClient(o)
	conn := client.Conn()
	if err := conn.Ping(ctx).Err(); err != nil {
		conn.Close()
		client.Close()
		return nil, nil, fmt.Errorf("connect to redis over %s: %w", ep, err)
	}
	return client, conn, nil
}

// Seed implements drivers.Driver.
func (d *Driver) Seed(ctx context.Context, ep drivers.Endpoint) error {
	if !d.w.Seeds() {
		return nil
	}
	client, conn, err := dial(ctx, d.Options(ep), ep)
	if err != nil {
		return err
	}
	defer client.Close()
	defer conn.Close()
	value, rows := d.value(), d.w.RowCount()
	for lo := 1; lo <= rows; lo += seedBatch {
		hi := min(lo+seedBatch-1, rows)
		_, err := conn.Pipelined(ctx, func(p goredis.Pipeliner) error {
			for id := lo; id <= hi; id++ {
				p.Set(ctx, drivers.KeyName(int64(id)), value, 0)
				if d.w.Writes() {
					p.Set(ctx, drivers.CounterName(int64(id)), 0, 0)
				}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("seed redis over %s: SET keys %d to %d of %d: %w", ep, lo, hi, rows, err)
		}
		d.w.Report(hi)
	}
	return nil
}

// seedBatch is how many SETs one seeding pipeline sends.
const seedBatch = 1000

// Info implements drivers.Driver.
func (d *Driver) Info(ctx context.Context, ep drivers.Endpoint) (drivers.ServerInfo, error) {
	client, conn, err := dial(ctx, d.Options(ep), ep)
	if err != nil {
		return drivers.ServerInfo{}, err
	}
	defer client.Close()
	defer conn.Close()
	text, err := conn.Info(ctx, "server").Result()
	if err != nil {
		return drivers.ServerInfo{}, fmt.Errorf("ask redis over %s for INFO server: %w", ep, err)
	}
	return ParseInfo(text), nil
}

// ParseInfo names the product from the INFO server section (Redis or a
// compatible server such as Valkey or KeyDB).
func ParseInfo(text string) drivers.ServerInfo {
	fields := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		if k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), ":"); ok {
			fields[k] = v
		}
	}
	info := drivers.ServerInfo{Product: "Redis", Version: fields["redis_version"]}
	switch {
	case fields["valkey_version"] != "":
		info.Product, info.Version = "Valkey", fields["valkey_version"]
	case fields["server_name"] != "" && !strings.EqualFold(fields["server_name"], name):
		info.Product = fields["server_name"]
	}
	if mode := fields["redis_mode"]; mode != "" {
		info.Detail = "mode " + mode
	}
	if id := fields["run_id"]; id != "" {
		info.Instance = "run_id " + id
	}
	return info
}

// Open implements drivers.Driver.
func (d *Driver) Open(ctx context.Context, ep drivers.Endpoint) (drivers.Conn, error) {
	o, socks := d.Options(ep), drivers.SocketsFor(ep)
	// go-redis leaves TLS to a Dialer of its own, and dials with a
	// context of its own.
	o.Dialer = d.dialer(drivers.KeepTrace(ctx, socks.DialTLS(ep.TLS)))
	stop := socks.AbortWhenDone(ctx) // go-redis reads its handshake's answers by its own timeouts
	client, conn, err := dial(ctx, o, ep)
	if !stop() {
		if err == nil {
			conn.Close()
			client.Close()
		}
		return nil, fmt.Errorf("connect to redis over %s: the server did not answer: %w", ep, context.Cause(ctx))
	}
	if err != nil {
		return nil, err
	}
	c := &Conn{socks: socks, auth: authOf(ep, d.protocol), client: client, conn: conn, size: d.ValueSize(), depth: d.Depth(), w: d.w,
		reads: !d.w.Updates(), template: strings.Fields(d.w.Query)}
	if len(c.template) > 0 && c.reads {
		if err := c.readOnly(ctx); err != nil {
			c.Close()
			return nil, drivers.StatementError(d.w.Query, ep, err)
		}
	}
	c.UseKeys(nil)
	return c, nil
}

// readOnly checks with the server (COMMAND INFO) that the template's
// command only reads: --op read never writes.
func (c *Conn) readOnly(ctx context.Context) error {
	name := strings.ToLower(c.template[0])
	info, err := c.commandInfo(ctx, name)
	if err == nil && info != nil && len(info.Flags) == 0 && len(c.template) > 1 {
		// A container command (CONFIG, OBJECT) has no flags of its own:
		// its subcommand has them (COMMAND INFO config|get).
		name += "|" + strings.ToLower(c.template[1])
		info, err = c.commandInfo(ctx, name)
	}
	if err != nil {
		return fmt.Errorf("COMMAND INFO %s: %w", name, err)
	}
	switch {
	case info == nil:
		return fmt.Errorf("the server has no command %s", strings.ToUpper(name))
	case !info.ReadOnly:
		return setting.Err("the server does not flag %s read-only (its flags: %s), so dbsock takes it for one that may write; a write needs %s %s (and %s against your own server)",
			strings.ToUpper(name), strings.Join(info.Flags, ", "), setting.Op, drivers.OpUpdate, setting.AllowWrites)
	}
	return nil
}

// commandInfo is the server's COMMAND INFO for name; nil when the server
// has no such command.
func (c *Conn) commandInfo(ctx context.Context, name string) (*goredis.CommandInfo, error) {
	cmd := goredis.NewCommandsInfoCmd(ctx, "command", "info", name)
	_ = c.conn.Process(ctx, cmd)
	infos, err := cmd.Result()
	if errors.Is(err, goredis.Nil) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return infos[name], nil
}

// LocalAddr is the client's own address of the connection (nil before
// one is dialed), which a proxy in front of the server lists it by.
func (c *Conn) LocalAddr() net.Addr { return c.socks.LocalAddr() }

// Conn is one dedicated Redis connection.
type Conn struct {
	socks    *drivers.Sockets
	auth     string // how the client authenticated (Negotiated.Auth)
	client   *goredis.Client
	conn     *goredis.Conn
	w        drivers.Workload
	size     int
	depth    int
	reads    bool     // some ops read (all but --op update)
	template []string // the user's command (--query), in words
	names    []string // the keys the next reads read, named before timing
	counters []string // the counters the next writes increment
	cmds     [][]any  // the user's command for each of the next ops
}

// Abort implements drivers.Aborter: the socket is closed under go-redis.
func (c *Conn) Abort() error { return c.socks.Abort() }

// UseKeys implements drivers.Keyed: the keys (or the user's commands) are
// made here, so that the timed ops format nothing (none: Key).
func (c *Conn) UseKeys(ids []int64) {
	if len(ids) == 0 {
		ids = []int64{1}
	}
	if len(c.template) > 0 {
		c.cmds = c.cmds[:0]
		for _, id := range ids {
			cmd := make([]any, len(c.template))
			for j, word := range c.template {
				cmd[j] = drivers.Fill(word, c.w.Key(id))
			}
			c.cmds = append(c.cmds, cmd)
		}
		return
	}
	c.names, c.counters = c.names[:0], c.counters[:0]
	if c.reads {
		c.names = drivers.KeyNames(c.names, ids, false)
	}
	if c.w.Writes() {
		c.counters = drivers.KeyNames(c.counters, ids, true)
	}
}

// Do implements drivers.Conn: one op on the first key.
func (c *Conn) Do(ctx context.Context) error { return c.DoKey(ctx, 0, false) }

// DoKey implements drivers.Keyed: one GET of key i, or depth GETs
// pipelined from key i on; an update (or a write of a mixed case), INCR of
// the row's counter; with your own command, that command, which must
// return something unless it writes.
func (c *Conn) DoKey(ctx context.Context, i int, write bool) error {
	if c.socks.Aborted() {
		return drivers.ErrAborted // go-redis would dial the server again
	}
	if c.depth > 1 {
		return c.pipelined(ctx, i)
	}
	switch {
	case c.cmds != nil:
		v, err := c.conn.Do(ctx, c.cmds[i]...).Result()
		return c.checkReply(c.cmds[i], v, err)
	case !c.reads || write:
		return c.conn.Incr(ctx, c.counters[i]).Err()
	}
	key := c.names[i]
	v, err := c.conn.Get(ctx, key).Result()
	if err == nil && len(v) != c.size {
		return fmt.Errorf("redis GET %s returned %d bytes, want %d", key, len(v), c.size)
	}
	if errors.Is(err, goredis.Nil) {
		return fmt.Errorf("redis GET %s %w (no such key)", key, drivers.ErrNoResult)
	}
	return err
}

// checkReply checks the reply to the user's command cmd: the server's
// error as it is; under a read, no value or an empty one is ErrNoResult.
func (c *Conn) checkReply(cmd []any, v any, err error) error {
	if err != nil && !errors.Is(err, goredis.Nil) {
		return err
	}
	if c.reads && (err != nil || v == nil || isEmpty(v)) {
		return fmt.Errorf("redis %q %w", cmd, drivers.ErrNoResult)
	}
	return nil
}

// isEmpty says whether a reply is an empty array or map.
func isEmpty(v any) bool {
	switch r := v.(type) {
	case []any:
		return len(r) == 0
	case map[any]any:
		return len(r) == 0
	}
	return false
}

// pipelined sends depth GETs, of the keys from first on, in one go-redis
// pipeline (a mixed case is never pipelined).
func (c *Conn) pipelined(ctx context.Context, first int) error {
	n := max(len(c.cmds), len(c.names), len(c.counters))
	cmds, err := c.conn.Pipelined(ctx, func(p goredis.Pipeliner) error {
		for i := 0; i < c.depth; i++ {
			k := drivers.KeyAt(first+i, n)
			switch {
			case c.cmds != nil:
				p.Do(ctx, c.cmds[k]...)
			case !c.reads:
				p.Incr(ctx, c.counters[k])
			default:
				p.Get(ctx, c.names[k])
			}
		}
		return nil
	})
	if err != nil && !errors.Is(err, goredis.Nil) {
		return err
	}
	for _, cmd := range cmds {
		if err := c.checkPipelined(cmd); err != nil {
			return err
		}
	}
	return nil
}

// checkPipelined checks one reply of a pipeline as Do checks its own.
func (c *Conn) checkPipelined(cmd goredis.Cmder) error {
	switch r := cmd.(type) {
	case *goredis.StringCmd:
		if v, err := r.Result(); err != nil || len(v) != c.size {
			return fmt.Errorf("redis pipelined GET %s: %d bytes, %v", r.Args()[1], len(v), err)
		}
	case *goredis.IntCmd:
		return r.Err()
	case *goredis.Cmd:
		v, err := r.Result()
		return c.checkReply(r.Args(), v, err)
	}
	return nil
}

// Close implements drivers.Conn.
func (c *Conn) Close() error {
	return errors.Join(c.conn.Close(), c.client.Close())
}

// OpenExecStats implements drivers.ExecStatter with INFO commandstats:
// Redis counts every GET and the microseconds it spent executing them.
func (d *Driver) OpenExecStats(ctx context.Context, ep drivers.Endpoint) (drivers.ExecReader, string, error) {
	client, conn, err := dial(ctx, d.Options(ep), ep)
	if err != nil {
		return nil, "", err
	}
	return &execReader{client: client, conn: conn}, "Redis INFO commandstats (cmdstat_get usec)", nil
}

type execReader struct {
	client *goredis.Client
	conn   *goredis.Conn
}

func (r *execReader) Read(ctx context.Context) (drivers.ExecStats, error) {
	text, err := r.conn.Info(ctx, "commandstats").Result()
	if err != nil {
		return drivers.ExecStats{}, fmt.Errorf("INFO commandstats: %w", err)
	}
	return ParseCommandStats(text, "get"), nil
}

func (r *execReader) Close() error { return errors.Join(r.conn.Close(), r.client.Close()) }

// ParseCommandStats reads command's calls and usec from INFO commandstats
// ("cmdstat_get:calls=3,usec=12,usec_per_call=4.00,...").
func ParseCommandStats(text, command string) drivers.ExecStats {
	var s drivers.ExecStats
	for _, line := range strings.Split(text, "\n") {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "cmdstat_"+command+":")
		if !ok {
			continue
		}
		for _, kv := range strings.Split(rest, ",") {
			k, v, _ := strings.Cut(kv, "=")
			switch k {
			case "calls":
				s.Calls, _ = strconv.ParseInt(v, 10, 64)
			case "usec":
				usec, _ := strconv.ParseFloat(v, 64)
				s.ExecNs = usec * 1e3
			}
		}
	}
	return s
}

// ListKeys implements drivers.KeyLister: the keys that match pattern
// (SCAN ... MATCH pattern), at most limit of them.
func (d *Driver) ListKeys(ctx context.Context, ep drivers.Endpoint, pattern string, limit int) ([]string, error) {
	client, conn, err := dial(ctx, d.Options(ep), ep)
	if err != nil {
		return nil, err
	}
	defer client.Close()
	defer conn.Close()
	keys := []string{}
	iter := conn.Scan(ctx, 0, pattern, 1000).Iterator()
	for len(keys) < limit && iter.Next(ctx) {
		keys = append(keys, iter.Val())
	}
	return keys, iter.Err()
}

// CheckQuery implements drivers.QueryTaker: a command in words separated
// by spaces, {key} in one of them (whether it only reads, the server
// says when a connection opens).
func (*Driver) CheckQuery(q, op string) error {
	f := strings.Fields(q)
	if len(f) < 2 || !strings.Contains(q, drivers.Placeholder) || strings.Contains(f[0], drivers.Placeholder) {
		return fmt.Errorf("%q is not a command with %s in an argument, e.g. \"HGET user:%s name\"", q, drivers.Placeholder, drivers.Placeholder)
	}
	if strings.ContainsAny(q, "\"'") {
		return fmt.Errorf("%q has quotes: dbsock splits the command at spaces and would send them as they are; give arguments without spaces or quotes", q)
	}
	return nil
}
