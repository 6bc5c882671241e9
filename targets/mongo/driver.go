// Package mongo is dbsock's driver for MongoDB and MongoDB-wire servers such
// as FerretDB, built on go.mongodb.org/mongo-driver/v2.
//
// The Go driver treats a host as a Unix socket only when it ends in "sock";
// Open refuses other socket paths rather than silently dialling TCP.
package mongo

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	gomongo "go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/internal/setting"
)

// Database, Collection, LookupID and Nickname describe the looked-up document.
const (
	Database   = "dbsock"
	Collection = "user"
	LookupID   = 1
	Nickname   = "dbsock"
)

// Ops: what one op sends.
const (
	OpFind = "find" // findOne by _id
	OpPing = "ping" // the ping command: the protocol floor, no data
)

// Ops lists the accepted ops.
var Ops = []string{OpFind, OpPing}

// Driver is the MongoDB driver for one op and value size.
type Driver struct {
	op        string
	valueSize int // 0: just the nickname
	w         drivers.Workload
	// db and coll are the collection the user's filter reads
	// (--mongo-collection; "": dbsock's own).
	db, coll string
}

// InCollection returns the driver reading the user's filter (--query) from
// collection coll of database db (the endpoint's, or Database, when "").
func (d *Driver) InCollection(db, coll string) *Driver {
	c := *d
	c.db, c.coll = db, coll
	return &c
}

// collection is the collection the ops read over ep.
func (d *Driver) collection(client *gomongo.Client, ep drivers.Endpoint) *gomongo.Collection {
	db, coll := d.db, d.coll
	if db == "" {
		db = dbName(ep)
	}
	if coll == "" {
		coll = Collection
	}
	return client.Database(db).Collection(coll)
}

// New returns the MongoDB driver doing op (OpFind when "") on a document
// whose payload field holds valueSize bytes (none when 0).
func New(op string, w drivers.Workload) *Driver {
	if op == "" {
		op = OpFind
	}
	return &Driver{op: op, valueSize: w.ValueSize, w: w}
}

// Name implements drivers.Driver.
func (*Driver) Name() string { return name }

// Mode implements drivers.Driver.
func (d *Driver) Mode() string { return d.op }

// ValueSize implements drivers.Driver.
func (d *Driver) ValueSize() int {
	if d.valueSize == 0 {
		return len(Nickname)
	}
	return d.valueSize
}

// Describe implements drivers.Driver.
func (d *Driver) Describe() string {
	if d.op == OpPing {
		return "`db.runCommand({ping: 1})` (one round trip per op, no data)"
	}
	find := fmt.Sprintf("`db.%s.findOne({_id: \"%s\"})`", Collection, drivers.IDText(d.w, LookupID))
	if d.w.Query != "" {
		coll := d.coll
		if coll == "" {
			coll = Collection
		}
		find = fmt.Sprintf("`db.%s.findOne(%s)` (your own query)", coll, d.w.Query)
	}
	switch {
	case d.w.Op == drivers.OpMixed:
		return fmt.Sprintf("%s or `db.%s.updateOne({_id: \"%s\"}, {$inc: {n: 1}})` (one round trip per op)", find, Collection, drivers.IDText(d.w, LookupID))
	case d.w.Updates():
		return fmt.Sprintf("`db.%s.updateOne({_id: \"%s\"}, {$inc: {n: 1}})` (one round trip per op)", Collection, drivers.IDText(d.w, LookupID))
	}
	return find + " (one round trip per op)"
}

// ConnectPhase implements drivers.Driver.
func (*Driver) ConnectPhase() string {
	return "creating a client (which also opens its own monitoring connection), connect, hello handshake, and a ping"
}

// ClientOptions maps an endpoint to driver options for a pool of one, with a
// direct connection and slow polling so that monitoring stays out of the way.
func ClientOptions(ep drivers.Endpoint) (*options.ClientOptions, error) {
	if ep.Transport.Network() == "unix" && !strings.HasSuffix(ep.Address, "sock") {
		return nil, fmt.Errorf("mongo socket path %q must end in \"sock\": the Go driver dials anything else over TCP", ep.Address)
	}
	opts := options.Client().
		SetHosts([]string{ep.Address}).
		SetDirect(true).
		SetMaxPoolSize(1).
		SetMinPoolSize(0).
		SetConnectTimeout(10 * time.Second).
		SetServerSelectionTimeout(10 * time.Second).
		SetTimeout(10 * time.Second).
		SetServerMonitoringMode(options.ServerMonitoringModePoll).
		SetHeartbeatInterval(30 * time.Second).
		// A timed op is one attempt: a retry would hide a failure in a
		// latency, and after an abort would wait to select a server again.
		SetRetryReads(false).
		SetRetryWrites(false).
		SetAppName("dbsock")
	if ep.User != "" {
		opts.SetAuth(options.Credential{Username: ep.User, Password: ep.Password})
	}
	if ep.Transport.Info().TLS {
		opts.SetTLSConfig(ep.TLS)
	}
	return opts, nil
}

// connect connects a client to ep, dialing through socks when given, its
// TLS sessions recorded by rec when given.
func connect(ctx context.Context, ep drivers.Endpoint, socks *drivers.Sockets, rec *drivers.TLSRecorder) (*gomongo.Client, error) {
	opts, err := ClientOptions(ep)
	if err != nil {
		return nil, err
	}
	if socks != nil {
		opts.SetDialer(socks)
	}
	if rec != nil && opts.TLSConfig != nil {
		opts.SetTLSConfig(rec.Config(opts.TLSConfig))
	}
	client, err := gomongo.Connect(opts)
	if err != nil {
		return nil, fmt.Errorf("configure mongo client for %s: %w", ep, err)
	}
	if err := client.Ping(ctx, nil); err != nil {
		_ = client.Disconnect(context.Background())
		return nil, fmt.Errorf("connect to mongo over %s: %w", ep, err)
	}
	return client, nil
}

func dbName(ep drivers.Endpoint) string {
	if ep.Database != "" {
		return ep.Database
	}
	return Database
}

// Seed implements drivers.Driver.
func (d *Driver) Seed(ctx context.Context, ep drivers.Endpoint) error {
	if !d.w.Seeds() || d.coll != "" {
		return nil // the user's keys, or the user's collection: dbsock creates nothing
	}
	client, err := connect(ctx, ep, nil, nil)
	if err != nil {
		return err
	}
	defer client.Disconnect(context.Background())
	coll := client.Database(dbName(ep)).Collection(Collection)
	// The collection is dbsock's own: it is made anew, then filled by
	// insertMany, seedBatch documents at a time.
	if err := coll.Drop(ctx); err != nil {
		return fmt.Errorf("seed mongo over %s: drop %s.%s: %w", ep, dbName(ep), Collection, err)
	}
	rows := d.w.RowCount()
	docs := make([]any, 0, seedBatch)
	for lo := 1; lo <= rows; lo += seedBatch {
		hi := min(lo+seedBatch-1, rows)
		docs = docs[:0]
		for id := lo; id <= hi; id++ {
			docs = append(docs, d.document(int64(id)))
		}
		if _, err := coll.InsertMany(ctx, docs); err != nil {
			return fmt.Errorf("seed mongo over %s: insert ids %d to %d of %d into %s.%s: %w", ep, lo, hi, rows, dbName(ep), Collection, err)
		}
		d.w.Report(hi)
	}
	return nil
}

// docID is row id's _id: its decimal digits as a string. A string _id is
// what FerretDB's SQLite backend looks up by its primary key (v1.24 pushes
// down only string and ObjectId _ids; with numbers it scans the collection:
// 92 ms per find over 10,000 documents, measured); MongoDB indexes _id of
// any type.
func docID(id int64) string { return strconv.FormatInt(id, 10) }

// seedBatch is how many documents one seeding insertMany writes.
const seedBatch = 1000

// document is the seeded document of id.
func (d *Driver) document(id int64) bson.D {
	doc := bson.D{{Key: "_id", Value: docID(id)}, {Key: "nickname", Value: Nickname}, {Key: "n", Value: int64(0)}}
	if d.valueSize > 0 {
		doc = append(doc, bson.E{Key: "payload", Value: bson.Binary{Data: make([]byte, d.valueSize)}})
	}
	return doc
}

// Info implements drivers.Driver: buildInfo, which FerretDB extends with its
// own version.
func (d *Driver) Info(ctx context.Context, ep drivers.Endpoint) (drivers.ServerInfo, error) {
	client, err := connect(ctx, ep, nil, nil)
	if err != nil {
		return drivers.ServerInfo{}, err
	}
	defer client.Disconnect(context.Background())
	raw, err := client.Database("admin").RunCommand(ctx, bson.D{{Key: "buildInfo", Value: 1}}).Raw()
	if err != nil {
		return drivers.ServerInfo{}, fmt.Errorf("ask mongo over %s for buildInfo: %w", ep, err)
	}
	return ParseBuildInfo(raw), nil
}

// RowLimit implements drivers.RowLimiter: FerretDB v1 on SQLite finds a
// document by _id so slowly in a large collection that the find, not the
// transport, is what would be measured: it reads one.
func (*Driver) RowLimit(info drivers.ServerInfo) (int, string) {
	if info.Product != "FerretDB" {
		return 0, ""
	}
	return 1, "FerretDB v1 (SQLite backend) finds a document by _id far more slowly in a large collection than MongoDB does " +
		"(measured here: about 10 ms per find over 10,000 documents, against 0.3 ms over one), so this target read one document " +
		"whatever the rows asked for; a MongoDB (mongod on PATH, or the mongo image) reads them all"
}

// ParseBuildInfo names the product behind a buildInfo reply.
func ParseBuildInfo(raw bson.Raw) drivers.ServerInfo {
	version, _ := raw.Lookup("version").StringValueOK()
	if fv, ok := raw.Lookup("ferretdbVersion").StringValueOK(); ok {
		return drivers.ServerInfo{Product: "FerretDB", Version: fv,
			Detail: "MongoDB wire protocol, reports MongoDB " + version}
	}
	return drivers.ServerInfo{Product: "MongoDB", Version: version}
}

// Open implements drivers.Driver.
func (d *Driver) Open(ctx context.Context, ep drivers.Endpoint) (drivers.Conn, error) {
	socks, rec := drivers.SocketsFor(ep), &drivers.TLSRecorder{}
	client, err := connect(ctx, ep, socks, rec)
	if err != nil {
		return nil, err
	}
	db := client.Database(dbName(ep))
	c := &Conn{
		socks:    socks,
		tls:      rec,
		client:   client,
		db:       db,
		coll:     d.collection(client, ep),
		ping:     bson.D{{Key: "ping", Value: 1}},
		op:       d.op,
		size:     d.valueSize,
		w:        d.w,
		reads:    !d.w.Updates(),
		template: d.w.Query,
	}
	if d.w.Writes() {
		c.inc = bson.D{{Key: "$inc", Value: bson.D{{Key: "n", Value: int64(1)}}}}
	}
	c.UseKeys(nil)
	return c, nil
}

// Abort implements drivers.Aborter: the sockets are closed under the
// driver, whose Disconnect would wait on a hung server.
func (c *Conn) Abort() error { return c.socks.Abort() }

// UseKeys implements drivers.Keyed: each id's filter is built here, so
// that the timed ops build nothing (none: LookupID).
func (c *Conn) UseKeys(ids []int64) {
	if len(ids) == 0 {
		ids = []int64{LookupID}
	}
	c.filters, c.bad = c.filters[:0], nil
	for _, id := range ids {
		if c.template == "" {
			c.filters = append(c.filters, bson.D{{Key: "_id", Value: c.w.Key(id)}})
			continue
		}
		f, err := Filter(c.template, c.w.Key(id))
		if err != nil {
			c.bad = err
		}
		c.filters = append(c.filters, f)
	}
}

// Filter is the user's filter template (--query) for key: the key's text
// in place of {key}, read as MongoDB extended JSON.
func Filter(template, key string) (bson.D, error) {
	var f bson.D
	if err := bson.UnmarshalExtJSON([]byte(drivers.Fill(template, key)), false, &f); err != nil {
		return nil, fmt.Errorf("filter %q for key %q is not a JSON filter: %w", template, key, err)
	}
	return f, nil
}

// CheckQuery implements drivers.QueryTaker: a JSON filter with {key} where
// the key goes (quoted for a string key, bare for a number), for reads.
func (*Driver) CheckQuery(q, op string) error {
	if op != drivers.OpRead {
		return setting.Err("your own op is a filter for findOne; %s %s increments dbsock's own counter and takes no filter of yours", setting.Op, drivers.OpUpdate)
	}
	if !strings.Contains(q, drivers.Placeholder) {
		return fmt.Errorf("%q has no %s; give a filter such as '{\"_id\": %s}' (or \"%s\" for a string key)", q, drivers.Placeholder, drivers.Placeholder, drivers.Placeholder)
	}
	_, err := Filter(q, "1")
	return err
}

// Conn is one MongoDB client with a pool of one connection.
type Conn struct {
	socks    *drivers.Sockets
	tls      *drivers.TLSRecorder
	client   *gomongo.Client
	db       *gomongo.Database
	coll     *gomongo.Collection
	w        drivers.Workload
	template string   // the user's filter (--query), "" for dbsock's
	reads    bool     // some ops read (all but --op update)
	filters  []bson.D // the next ops' filters, built before timing
	bad      error    // why a filter could not be built
	ping     bson.D
	inc      bson.D // the counter's $inc (nil: the ops never write)
	op       string
	size     int
}

// Do implements drivers.Conn: one op on the first key.
func (c *Conn) Do(ctx context.Context) error { return c.DoKey(ctx, 0, false) }

// DoKey implements drivers.Keyed: one find of key i by _id (or by the
// user's filter), one update of its counter, or one ping.
func (c *Conn) DoKey(ctx context.Context, i int, write bool) error {
	if c.socks.Aborted() {
		return drivers.ErrAborted // the driver would wait to select a server again
	}
	if c.op == OpPing {
		return c.db.RunCommand(ctx, c.ping).Err()
	}
	if c.bad != nil {
		return c.bad
	}
	filter := c.filters[i]
	if !c.reads || write {
		res, err := c.coll.UpdateOne(ctx, filter, c.inc)
		if err == nil && res.ModifiedCount != 1 {
			err = fmt.Errorf("mongo updateOne %v changed %d documents, want 1: is it seeded?", filter, res.ModifiedCount)
		}
		return err
	}
	raw, err := c.coll.FindOne(ctx, filter).Raw()
	if c.template != "" {
		if errors.Is(err, gomongo.ErrNoDocuments) {
			return fmt.Errorf("mongo findOne(%v) %w (no document)", filter, drivers.ErrNoResult)
		}
		return err
	}
	if err != nil {
		return err
	}
	if nick, ok := raw.Lookup("nickname").StringValueOK(); !ok || nick != Nickname {
		return fmt.Errorf("mongo findOne %v returned no nickname %q", filter, Nickname)
	}
	if c.size > 0 {
		if _, data, ok := raw.Lookup("payload").BinaryOK(); !ok || len(data) != c.size {
			return fmt.Errorf("mongo findOne %v returned a payload of %d bytes, want %d", filter, len(data), c.size)
		}
	}
	return nil
}

// Verify implements drivers.Conn using whatsmyuri: a TCP client is an
// IP:port; a Unix socket client is not (mongod says "anonymous unix socket",
// FerretDB an invalid address).
func (c *Conn) Verify(ctx context.Context) (drivers.Verification, error) {
	raw, err := c.db.RunCommand(ctx, bson.D{{Key: "whatsmyuri", Value: 1}}).Raw()
	if err != nil {
		return drivers.Verification{}, fmt.Errorf("whatsmyuri: %w", err)
	}
	you, ok := raw.Lookup("you").StringValueOK()
	if !ok {
		return drivers.Verification{}, errors.New("whatsmyuri reply has no \"you\" field")
	}
	return PeerVerified(you, c.tls.Negotiated()), nil
}

// PeerVerified is the transport of a client whose whatsmyuri is you and
// whose TLS session is n. Neither FerretDB nor mongod says whether a
// connection is encrypted: a TCP client is on the tls path when its
// handshake with the server's certificate succeeded, which only a TLS
// listener completes (and on which a plain client's commands fail).
func PeerVerified(you string, n drivers.Negotiated) drivers.Verification {
	v := drivers.Verification{Transport: drivers.ClassifyPeer(you, false), Evidence: "whatsmyuri you=" + you, Peer: you}
	if !n.IsZero() && v.Transport.Secured() != v.Transport {
		v.Transport, v.Negotiated = v.Transport.Secured(), n
		v.Evidence += " (the server does not say whether a connection is encrypted; the client's TLS handshake on this connection's listener succeeded)"
	}
	return v
}

// Close implements drivers.Conn.
func (c *Conn) Close() error {
	// Disconnect ends the client's sessions on the server first, with no
	// deadline of its own: a server that stopped answering would hold it.
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if c.socks.Aborted() {
		cancel() // nothing to tell a server that did not answer
	}
	return c.client.Disconnect(ctx)
}
