// Package mongo registers the mongo target: a findOne by _id through the
// MongoDB Go driver v2, against MongoDB or a server speaking its wire
// protocol (FerretDB).
package mongo

import (
	"context"
	"net"
	"strings"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/internal/setting"
	"github.com/dbsock/dbsock/supply"
	"github.com/dbsock/dbsock/targets"
)

const name = "mongo"

// User is the account of the FerretDB servers dbsock starts (in admin).
const User = "dbsock"

var external = targets.External{
	Product:    "MongoDB",
	SocketHelp: "external MongoDB Unix socket path (must end in .sock)",
	UserHelp:   "external MongoDB user (password from $DBSOCK_MONGO_PASSWORD)",
}

func init() {
	targets.Register(targets.Target{
		Target: supply.Target{Name: name, Recipe: recipe, SocketFlag: external.SocketFlag(name)},
		Order:  30, InAll: true,
		Short:    "findOne by _id (MongoDB, or FerretDB speaking its wire protocol)",
		ServedBy: "mongod, or FerretDB (MongoDB wire protocol), local, container or yours",
		Library:  "go.mongodb.org/mongo-driver/v2",
		Settings: func() targets.Settings { return DefaultSettings() },
		Flags: append(external.Flags(name),
			targets.Flag{Field: "Op", Name: "mongo-op", Help: "what one MongoDB op is: " + strings.Join(Ops, ", ")},
			targets.Flag{Field: "Collection", Name: "mongo-collection", Help: "the collection your --query filter reads, COLLECTION or DATABASE.COLLECTION (default: dbsock's own, which it seeds)"}),
		Help: targets.Help{Query: `a filter with {key}, e.g. '{"_id": {key}}'`, Update: "$inc"},
		Kind: &drivers.Kind{Waits: "MongoDB", SocketMode: "MongoDB: --filePermissions 0770 or 0777"},
		Doctor: &targets.Doctor{
			Name:      "MongoDB",
			WellKnown: []string{"/tmp/mongodb-27017.sock"},
			Match:     func(base string) bool { return strings.Contains(base, name) || strings.Contains(base, "ferretdb") },
			Localhost: "clients use TCP unless the host is this path, percent-encoded: mongodb://" + "%2Ftmp%2Fmongodb-27017.sock; the Go driver needs it to end in \"sock\".",
			Answer:    buildInfo,
		},
	})
}

// Settings are the mongo target's settings (dbsock run's --mongo-*
// flags).
type Settings struct {
	// Op is what one op is: one of Ops.
	Op string `json:"op"`
	// Collection is the collection the user's own filter reads,
	// COLLECTION or DATABASE.COLLECTION ("": dbsock's own); it applies
	// only to the user's own op.
	Collection string `json:"collection,omitempty"`
	// Server is a MongoDB the user runs (none by default).
	targets.Server `json:"-"`
}

// DefaultSettings are the mongo target's settings at their defaults.
func DefaultSettings() *Settings {
	return &Settings{Op: OpFind, Server: external.Server(name)}
}

// Validate implements targets.Settings.
func (s *Settings) Validate() error {
	if db, coll, _ := s.split(); s.Collection != "" && (coll == "" || strings.ContainsAny(db+coll, "$\x00")) {
		return setting.Err("%s %q is not COLLECTION or DATABASE.COLLECTION", targets.Field(name, "Collection"), s.Collection)
	}
	return targets.OneOf(targets.Field(name, "Op"), s.Op, Ops...)
}

// split reads Collection: DATABASE.COLLECTION, or COLLECTION.
func (s *Settings) split() (db, coll string, ok bool) {
	if db, coll, ok := strings.Cut(s.Collection, "."); ok {
		return db, coll, true
	}
	return "", s.Collection, false
}

// Driver implements targets.Settings.
func (s *Settings) Driver(w drivers.Workload) drivers.Driver {
	d := New(s.Op, w)
	if db, coll, _ := s.split(); coll != "" && w.Query != "" {
		return d.InCollection(db, coll)
	}
	return d
}

// NeedQuery implements targets.QueryOnly.
func (s *Settings) NeedQuery() []setting.Field {
	if s.Collection != "" {
		return []setting.Field{targets.Field(name, "Collection")}
	}
	return nil
}

// buildInfo asks the server at path what it is, through the driver (the
// wire protocol needs a real handshake).
func buildInfo(ctx context.Context, c net.Conn, path string) string {
	c.Close()
	info, err := New("", drivers.Workload{}).Info(ctx, drivers.SocketAt(path))
	if err != nil {
		return "no answer to buildInfo: " + err.Error()
	}
	s := info.String()
	if info.Detail != "" {
		s += " (" + info.Detail + ")"
	}
	return s
}
