package mongo

import (
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/dbsock/dbsock/drivers"
)

func TestParseBuildInfo(t *testing.T) {
	raw, _ := bson.Marshal(bson.D{{Key: "version", Value: "7.0.77"}, {Key: "ferretdbVersion", Value: "v1.24.0"}})
	got := ParseBuildInfo(raw)
	if got.Product != "FerretDB" || got.Version != "v1.24.0" || !strings.Contains(got.Detail, "7.0.77") {
		t.Fatalf("FerretDB buildInfo parsed as %+v", got)
	}
	raw, _ = bson.Marshal(bson.D{{Key: "version", Value: "8.0.4"}})
	if got := ParseBuildInfo(raw); got.Product != "MongoDB" || got.Version != "8.0.4" {
		t.Fatalf("MongoDB buildInfo parsed as %+v", got)
	}
}

func TestClientOptionsRefusesSocketNotEndingInSock(t *testing.T) {
	_, err := ClientOptions(drivers.Endpoint{Transport: drivers.Unix, Address: "/tmp/mongo.socket"})
	if err == nil || !strings.Contains(err.Error(), "must end in") {
		t.Fatalf("got %v, want an error about the sock suffix", err)
	}
	if _, err := ClientOptions(drivers.Endpoint{Transport: drivers.Unix, Address: "/tmp/mongodb-27017.sock"}); err != nil {
		t.Fatal(err)
	}
}
