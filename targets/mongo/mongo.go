// Package mongo registers the mongo target: a findOne by _id through the
// MongoDB Go driver v2, against MongoDB or a server speaking its wire
// protocol (FerretDB).
package mongo

import (
	"context"
	"fmt"
	"net"
	"strings"

	"github.com/spf13/pflag"

	"github.com/dbsock/dbsock/compose"
	"github.com/dbsock/dbsock/drivers"
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
		Target: compose.Target{Name: name, Recipe: recipe, SocketFlag: external.SocketFlag(name)},
		Order:  30, InAll: true,
		Short:    "findOne by _id (MongoDB, or FerretDB speaking its wire protocol)",
		ServedBy: "mongod, or FerretDB (MongoDB wire protocol), local, container or yours",
		Library:  "go.mongodb.org/mongo-driver/v2",
		Settings: bind,
		Doctor: &targets.Doctor{
			Name:      "MongoDB",
			WellKnown: []string{"/tmp/mongodb-27017.sock"},
			Match:     func(base string) bool { return strings.Contains(base, name) || strings.Contains(base, "ferretdb") },
			Localhost: "clients use TCP unless the host is this path, percent-encoded: mongodb://" + "%2Ftmp%2Fmongodb-27017.sock; the Go driver needs it to end in \"sock\".",
			Answer:    buildInfo,
		},
	})
}

type settings struct {
	op, collection string
	ext            *targets.ExternalFlags
}

func bind(f *pflag.FlagSet) targets.Settings {
	s := &settings{op: OpFind, ext: external.Bind(f, name)}
	if f != nil {
		f.StringVar(&s.op, "mongo-op", OpFind, "what one MongoDB op is: "+strings.Join(Ops, ", "))
		f.StringVar(&s.collection, "mongo-collection", "", "the collection your --query filter reads, COLLECTION or DATABASE.COLLECTION (default: dbsock's own, which it seeds)")
	}
	return s
}

func (s *settings) Validate() error {
	if db, coll, _ := s.split(); s.collection != "" && (coll == "" || strings.ContainsAny(db+coll, "$\x00")) {
		return fmt.Errorf("--mongo-collection %q is not COLLECTION or DATABASE.COLLECTION", s.collection)
	}
	return targets.OneOf("mongo-op", s.op, Ops...)
}

// split reads --mongo-collection: DATABASE.COLLECTION, or COLLECTION.
func (s *settings) split() (db, coll string, ok bool) {
	if db, coll, ok := strings.Cut(s.collection, "."); ok {
		return db, coll, true
	}
	return "", s.collection, false
}

func (s *settings) Driver(w drivers.Workload) drivers.Driver {
	d := New(s.op, w)
	if db, coll, _ := s.split(); coll != "" && w.Query != "" {
		return d.InCollection(db, coll)
	}
	return d
}

// NeedQuery implements targets.QueryFlags.
func (s *settings) NeedQuery() []string {
	if s.collection != "" {
		return []string{"--mongo-collection"}
	}
	return nil
}

func (s *settings) External() (compose.Pair, error) { return s.ext.Pair() }

// buildInfo asks the server at path what it is, through the driver (the
// wire protocol needs a real handshake).
func buildInfo(ctx context.Context, c net.Conn, path string) string {
	c.Close()
	info, err := New("", drivers.Workload{}).Info(ctx, drivers.Endpoint{Transport: drivers.Unix, Address: path})
	if err != nil {
		return "no answer to buildInfo: " + err.Error()
	}
	s := info.String()
	if info.Detail != "" {
		s += " (" + info.Detail + ")"
	}
	return s
}
