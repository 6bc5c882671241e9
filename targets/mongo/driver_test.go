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

// TestPeerVerified: a TCP client is on the tls path only with a TLS
// session; a socket client never is.
func TestPeerVerified(t *testing.T) {
	n := drivers.Negotiated{TLSVersion: "TLS 1.3", TLSCipher: "TLS_AES_128_GCM_SHA256"}
	for _, tt := range []struct {
		you  string
		n    drivers.Negotiated
		want drivers.Transport
	}{
		{"127.0.0.1:5000", n, drivers.TLS},
		{"127.0.0.1:5000", drivers.Negotiated{}, drivers.TCP},
		{"invalid AddrPort", drivers.Negotiated{}, drivers.Unix},
		{"[::1]:5000", drivers.Negotiated{}, drivers.TCP6},
	} {
		if v := PeerVerified(tt.you, tt.n); v.Transport != tt.want {
			t.Errorf("%s with %+v: %s, want %s", tt.you, tt.n, v.Transport, tt.want)
		}
	}
}
