package mongo_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	gomongo "go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/internal/testutil"
	"github.com/dbsock/dbsock/targets/mongo"
	"github.com/dbsock/dbsock/targets/targettest"
)

// TestLocalMongodRequiresTheRunsAccount: with a mongod on PATH that
// requires authentication (testdata/mongod: FerretDB behind mongod's flags
// and its localhost exception, as no MongoDB is installed here), the local
// provider starts it with --auth, makes the run's account, and no login
// without the run's password is answered: none, a wrong password, an
// empty one, over TCP and the socket; nor does a createUser without a
// login get through once the server listens on TCP (no localhost
// exception is left). The run's password is in no process's command line
// or environment.
func TestLocalMongodRequiresTheRunsAccount(t *testing.T) {
	testutil.NeedAny(t, "ferretdb")
	bin := t.TempDir()
	// As root, dbsock runs the server as another user, who must reach it.
	for _, d := range []string{bin, filepath.Dir(bin)} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := exec.Command("go", "build", "-o", filepath.Join(bin, "mongod"), "./testdata/mongod").CombinedOutput(); err != nil {
		t.Fatalf("build the mongod stand-in: %v\n%s", err, out)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	srv := targettest.Local(t, "mongo", "mongod")
	if !strings.Contains(srv.Origin, filepath.Join(bin, "mongod")) {
		t.Fatalf("the server is %q, not the mongod stand-in", srv.Origin)
	}
	if srv.TCP().User != mongo.User || srv.TCP().Password == "" {
		t.Fatalf("the server's account is %q with password %q", srv.TCP().User, srv.TCP().Password)
	}
	for _, ep := range []drivers.Endpoint{srv.TCP(), srv.Unix()} {
		if err := find(ep); err != nil && !errors.Is(err, gomongo.ErrNoDocuments) {
			t.Errorf("%s with the run's account: %v", ep.Transport, err)
		}
		for _, cred := range [][2]string{{"", ""}, {mongo.User, "wrong"}, {mongo.User, ""}, {"standin-bootstrap", ""}} {
			ep.User, ep.Password = cred[0], cred[1]
			if err := find(ep); err == nil || errors.Is(err, gomongo.ErrNoDocuments) {
				t.Errorf("%s as %q with password %q: a find was answered (%v)", ep.Transport, cred[0], cred[1], err)
			}
		}
		ep.User, ep.Password = "", ""
		if err := run(ep, bson.D{{Key: "createUser", Value: "intruder"}, {Key: "pwd", Value: "x"}, {Key: "roles", Value: bson.A{}}}); err == nil {
			t.Errorf("%s: a createUser without a login got through", ep.Transport)
		}
	}
	for _, f := range append(glob(t, "/proc/[0-9]*/environ"), glob(t, "/proc/[0-9]*/cmdline")...) {
		if b, err := os.ReadFile(f); err == nil && bytes.Contains(b, []byte(srv.TCP().Password)) {
			t.Errorf("%s holds the run's password", f)
		}
	}
}

func glob(t *testing.T, pattern string) []string {
	m, err := filepath.Glob(pattern)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// find runs one find at ep.
func find(ep drivers.Endpoint) error {
	return withClient(ep, func(ctx context.Context, c *gomongo.Client) error {
		return c.Database("dbsock").Collection("user").FindOne(ctx, bson.D{}).Err()
	})
}

// run runs cmd on admin at ep.
func run(ep drivers.Endpoint, cmd bson.D) error {
	return withClient(ep, func(ctx context.Context, c *gomongo.Client) error {
		return c.Database("admin").RunCommand(ctx, cmd).Err()
	})
}

func withClient(ep drivers.Endpoint, do func(context.Context, *gomongo.Client) error) error {
	o, err := mongo.ClientOptions(ep)
	if err != nil {
		return err
	}
	if ep.User != "" {
		o.Auth.PasswordSet = true // an empty password is a password tried
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := gomongo.Connect(o)
	if err != nil {
		return err
	}
	defer c.Disconnect(ctx)
	return do(ctx, c)
}
