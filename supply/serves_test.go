package supply

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/internal/setting"
)

// TestExternalSaysWhatIsMissing: a server the user runs without a tls
// endpoint cannot serve the tls path, and one given by a single endpoint
// cannot be supplied; each says so as a MissingEndpoint (the target and
// the paths), in the supply layer's own terms, which name no flag.
func TestExternalSaysWhatIsMissing(t *testing.T) {
	tcp := drivers.Endpoint{Transport: drivers.TCP, Address: "127.0.0.1:6379"}
	e := &External{Endpoints: map[string]Pair{"redis": {TCP: tcp}, "mysql": {TCP: tcp, TLS: drivers.Endpoint{Transport: drivers.TLS, Address: "127.0.0.1:3306"}}}}
	var m *MissingEndpoint
	err := e.CannotServe(drivers.TLS, []string{"redis"})
	if !errors.As(err, &m) || m.Target != "redis" || !slices.Equal(m.Paths, []drivers.Transport{drivers.TLS}) {
		t.Fatalf("CannotServe(tls) = %v", err)
	}
	if want := `no tls endpoint was given for redis: set TLS of External.Endpoints["redis"]`; err.Error() != want {
		t.Errorf("Error() = %q, want %q", err, want)
	}
	if err := e.CannotServe(drivers.TLS, []string{"redis", "mysql"}); err != nil {
		t.Errorf("tls given for mysql: %v", err)
	}
	if err := e.CannotServe(drivers.Pod, []string{"redis"}); err == nil || err.Error() != drivers.Pod.Info().Absent {
		t.Errorf("pod: %v", err)
	}
	if err := e.CannotServe(drivers.TCP6, []string{"redis"}); err != nil {
		t.Errorf("tcp6: %v", err)
	}
	_, err = e.Supply(context.Background(), Target{Name: "redis"})
	if !errors.As(err, &m) || !slices.Equal(m.Paths, []drivers.Transport{drivers.Unix}) || errors.Is(err, ErrCannotSupply) {
		t.Errorf("Supply with tcp alone: %v", err)
	}
	_, err = e.Supply(context.Background(), Target{Name: "postgres"})
	if !errors.As(err, &m) || !slices.Equal(m.Paths, []drivers.Transport{drivers.TCP, drivers.Unix}) || !errors.Is(err, ErrCannotSupply) {
		t.Errorf("Supply with nothing given: %v", err)
	}
}

// TestExternalWithoutTLSNamesItsSettings: a server the user runs on TCP
// and Unix, given no TLS, says why its tls path is not measured by the
// target's settings that would give it (setting.Of), for its reader to
// word (dbsock run: its flags), naming no flag itself.
func TestExternalWithoutTLSNamesItsSettings(t *testing.T) {
	e := &External{Endpoints: map[string]Pair{"redis": {
		TCP:  drivers.Endpoint{Transport: drivers.TCP, Address: "127.0.0.1:1"},
		Unix: drivers.Endpoint{Transport: drivers.Unix, Address: "/nonexistent/dbsock-external.sock"}}}}
	srv, err := e.Supply(context.Background(), Target{Name: "redis"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = srv.Path(drivers.TLS)
	var se *setting.Error
	if !errors.As(err, &se) || !slices.Equal(se.Fields(), []setting.Field{setting.Of("redis", "TLSCA"), setting.Of("redis", "TLSInsecure")}) {
		t.Fatalf("Path(tls) = %v, want an error naming redis's TLSCA and TLSInsecure", err)
	}
	if strings.Contains(err.Error(), "--") {
		t.Errorf("Path(tls) = %q names a flag", err)
	}
	flags := func(f setting.Field) string {
		return map[setting.Field]string{setting.Of("redis", "TLSCA"): "--redis-tls-ca", setting.Of("redis", "TLSInsecure"): "--redis-tls-insecure"}[f]
	}
	if got, want := setting.In(err, flags), "no --redis-tls-ca (or --redis-tls-insecure) was given"; got != want {
		t.Errorf("worded with flags: %q, want %q", got, want)
	}
}
