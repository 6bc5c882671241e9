package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dbsock/dbsock/internal/testutil"
	"github.com/dbsock/dbsock/supply"
	"github.com/dbsock/dbsock/targets/redis"
)

// tlsRedis starts a Redis the way a user runs one, with its own
// certificate from ca (not dbsock's): a plain port, a TLS port and a
// socket, on loopback, behind a password. It returns the ports, the
// socket and a password file.
func tlsRedis(t *testing.T, ca *supply.RunCA) (plain, tlsPort int, sock, pwFile string) {
	t.Helper()
	dir := shortTempDir(t)
	tf, err := ca.WriteFiles(dir, "", -1, -1)
	if err != nil {
		t.Fatal(err)
	}
	if plain, err = supply.FreePort(); err != nil {
		t.Fatal(err)
	}
	if tlsPort, err = supply.FreePort(); err != nil {
		t.Fatal(err)
	}
	sock, pwFile = filepath.Join(dir, "r.sock"), filepath.Join(dir, "pw")
	password, err := supply.RandomPassword()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pwFile, []byte(password+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	conf := "port " + strconv.Itoa(plain) + "\nbind 127.0.0.1\nunixsocket " + sock + "\nunixsocketperm 700\nsave \"\"\nappendonly no\nrequirepass " + password + "\n" +
		redis.TLSConfig(tlsPort, tf)
	cmd := exec.Command("redis-server", "-")
	cmd.Stdin = strings.NewReader(conf)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Stat(sock); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("redis-server did not create its socket within 10s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	return plain, tlsPort, sock, pwFile
}

// TestExternalTLS measures the tls path of a server the user runs, with
// its own certificate, given its CA; a wrong CA, an expired certificate
// and an address without TLS are each refused before timing, saying
// what to do.
func TestExternalTLS(t *testing.T) {
	testutil.NeedAny(t, "redis-server")
	now := time.Now()
	good, err := supply.NewRunCA(now)
	if err != nil {
		t.Fatal(err)
	}
	expired, err := supply.NewCA(now.Add(-72*time.Hour), now.Add(-24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	other, err := supply.NewRunCA(now)
	if err != nil {
		t.Fatal(err)
	}
	caFile := func(ca *supply.RunCA) string {
		p := filepath.Join(t.TempDir(), "ca.pem")
		if err := os.WriteFile(p, ca.CertPEM(), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	run := func(plain, tlsPort int, sock, pwFile, ca string, extra ...string) (int, string, string) {
		args := append([]string{"run", "redis", "--provider", "external", "--paths", "tcp,tls,unix", "--n", "100", "--warmup", "10",
			"--instances", "1", "--rounds", "1", "--redis-addr", "127.0.0.1:" + strconv.Itoa(plain), "--redis-socket", sock,
			"--redis-password-file", pwFile, "--redis-tls-ca", ca, "--redis-tls-addr", "127.0.0.1:" + strconv.Itoa(tlsPort), "--format", "json", "-q"}, extra...)
		return dbsock(t, args...)
	}

	plain, tlsPort, sock, pwFile := tlsRedis(t, good)
	ca := caFile(good)
	code, stdout, stderr := run(plain, tlsPort, sock, pwFile, ca)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if strings.Count(stdout, `"transport_verified": true`) != 3 || !strings.Contains(stdout, `"network": "tls"`) ||
		!strings.Contains(stdout, `"tls_version": "TLS 1.3"`) || !strings.Contains(stdout, `"tls_trust": "the CAs in `+ca+`"`) || strings.Contains(stdout, "--redis-tls-ca") {
		t.Fatalf("the tls path was not measured and verified:\n%s", stdout)
	}

	for _, tt := range []struct {
		name       string
		server     *supply.RunCA
		ca         string
		plainAsTLS bool
		want       string
	}{
		{"wrong CA", good, caFile(other), false, "is not signed by a CA the client trusts"},
		{"expired", expired, caFile(expired), false, "has expired or is not valid yet"},
		{"no TLS there", good, caFile(good), true, "never answers a TLS handshake"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			plain, tlsPort, sock, pwFile := tlsRedis(t, tt.server)
			if tt.plainAsTLS {
				tlsPort = plain
			}
			code, _, stderr := run(plain, tlsPort, sock, pwFile, tt.ca, "--op-timeout", "2s")
			if code != ExitFailed || !strings.Contains(stderr, tt.want) || !strings.Contains(stderr, "tls 127.0.0.1:"+strconv.Itoa(tlsPort)) {
				t.Fatalf("exit %d, want %d and %q naming the tls endpoint; stderr:\n%s", code, ExitFailed, tt.want, stderr)
			}
			if strings.Contains(stderr, "ops/s") {
				t.Errorf("timed before refusing:\n%s", stderr)
			}
		})
	}
}
