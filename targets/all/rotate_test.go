package all_test

import (
	"context"
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/sha256"
	"encoding/base64"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/supply"
	"github.com/dbsock/dbsock/targets"
	"github.com/dbsock/dbsock/targets/postgres"
)

// TestContainersRotateBootstrapPasswords: the mysql and postgres
// containers are handed bootstrap passwords, which their server took
// before dbsock changed them; once Supply returns, and again after a
// restart, no bootstrap password logs in over tcp or unix (as the
// account, or as mysql's root over its socket), and the run's password
// does.
func TestContainersRotateBootstrapPasswords(t *testing.T) {
	for _, provider := range []string{"docker", "compose"} {
		for _, target := range []string{"mysql", "postgres"} {
			t.Run(provider+"/"+target, func(t *testing.T) {
				tg, _ := targets.Lookup(target)
				d := tg.Settings().Driver(drivers.Workload{})
				s := sharedSupplied(t, target, provider) // its recipe's Rotate records what it is handed
				srv := s.srv
				handed, took := s.rotated()
				if !took || len(handed) == 0 {
					t.Fatalf("the server never took a bootstrap password (%d handed over)", len(handed))
				}
				checkRotated(t, d, srv, handed)
				ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
				defer cancel()
				if err := srv.Restart(ctx); err != nil {
					t.Fatalf("restart: %v", err)
				}
				checkRotated(t, d, srv, handed)
			})
		}
	}
}

// checkRotated fails t unless srv's accounts take the run's password
// and none of boot.
func checkRotated(t *testing.T, d drivers.Driver, srv *supply.Server, boot map[string]string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	eps := []drivers.Endpoint{srv.TCP(), srv.Unix()}
	if srv.Target == "mysql" {
		root := srv.Unix()
		root.User, root.Database = "root", ""
		eps = append(eps, root)
	}
	if srv.Target == "postgres" {
		// The socket is trusted (initdb's default, inside the run's
		// private directory), so a login there says nothing of the
		// password: the stored verifier does. TCP asks for it.
		checkVerifier(ctx, t, srv, boot)
		eps = []drivers.Endpoint{srv.TCP()}
		wrong := srv.TCP()
		wrong.Password = "not-the-runs-password"
		if _, err := d.Info(ctx, wrong); err == nil {
			t.Errorf("postgres over tcp logs in with a wrong password")
		}
	}
	for _, ep := range eps {
		if _, err := d.Info(ctx, ep); err != nil {
			t.Errorf("%s over %s with the run's password: %v", ep.User, ep.Transport, err)
		}
		for name, pw := range boot {
			if pw == srv.TCP().Password {
				t.Fatalf("the bootstrap password %s is the run's", name)
			}
			ep.Password = pw
			if _, err := d.Info(ctx, ep); err == nil {
				t.Errorf("%s over %s still logs in with the bootstrap password %s", ep.User, ep.Transport, name)
			}
		}
	}
}

// checkVerifier fails t unless the SCRAM verifier PostgreSQL stores for
// srv's account is the run's password's, and not a bootstrap one's.
func checkVerifier(ctx context.Context, t *testing.T, srv *supply.Server, boot map[string]string) {
	t.Helper()
	cfg, err := postgres.Config(srv.Unix())
	if err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatalf("log in over unix: %v", err)
	}
	defer conn.Close(ctx)
	var stored string
	if err := conn.QueryRow(ctx, "SELECT rolpassword FROM pg_authid WHERE rolname = $1", srv.Unix().User).Scan(&stored); err != nil {
		t.Fatalf("read the account's verifier: %v", err)
	}
	if !scramMatches(t, stored, srv.Unix().Password) {
		t.Errorf("the account's verifier is not the run's password's")
	}
	for name, pw := range boot {
		if scramMatches(t, stored, pw) {
			t.Errorf("the account's verifier is still the bootstrap password %s's", name)
		}
	}
}

// scramMatches says whether pw matches a SCRAM-SHA-256$ITER:SALT$STOREDKEY:SERVERKEY verifier.
func scramMatches(t *testing.T, verifier, pw string) bool {
	t.Helper()
	head, keys, ok := strings.Cut(strings.TrimPrefix(verifier, "SCRAM-SHA-256$"), "$")
	iterS, saltS, ok2 := strings.Cut(head, ":")
	storedS, _, ok3 := strings.Cut(keys, ":")
	iter, err := strconv.Atoi(iterS)
	salt, err2 := base64.StdEncoding.DecodeString(saltS)
	storedKey, err3 := base64.StdEncoding.DecodeString(storedS)
	if !ok || !ok2 || !ok3 || err != nil || err2 != nil || err3 != nil || !strings.HasPrefix(verifier, "SCRAM-SHA-256$") {
		t.Fatalf("the account's password is not stored as a SCRAM-SHA-256 verifier")
	}
	salted, err := pbkdf2.Key(sha256.New, pw, salt, iter, sha256.Size)
	if err != nil {
		t.Fatal(err)
	}
	mac := hmac.New(sha256.New, salted)
	mac.Write([]byte("Client Key"))
	sum := sha256.Sum256(mac.Sum(nil))
	return hmac.Equal(sum[:], storedKey)
}
