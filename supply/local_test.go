package supply

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/internal/cpustat"
)

// testTarget is a target whose local recipe hands out a made-up server.
func testTarget(target string) Target {
	return Target{Name: target, Recipe: Recipe{Local: func(context.Context, *Local, string) (*Server, error) {
		return &Server{Target: target, Provenance: drivers.Provenance{Provider: "local"}}, nil
	}}}
}

func TestLocalWithoutRecipeCannotSupply(t *testing.T) {
	l := NewLocal()
	defer l.Close()
	_, err := l.Supply(context.Background(), Target{Name: "x"})
	if !errors.Is(err, ErrCannotSupply) {
		t.Fatalf("got %v, want ErrCannotSupply", err)
	}
}

func TestNotFoundNamesPATH(t *testing.T) {
	t.Setenv("PATH", "/nowhere")
	err := NotFound("x", "xd", "apt-get install x")
	if !errors.Is(err, ErrCannotSupply) || !strings.Contains(err.Error(), "PATH=/nowhere") || !strings.Contains(err.Error(), "apt-get install x") {
		t.Fatalf("got %v", err)
	}
}

func TestLocalTempDirFailureSaysWhatToDo(t *testing.T) {
	t.Setenv("TMPDIR", "/nonexistent/dbsock-tmp")
	l := NewLocal()
	defer l.Close()
	_, err := l.ServerDir("redis")
	if err == nil || !strings.Contains(err.Error(), "set TMPDIR to an existing directory") || !strings.Contains(err.Error(), "/nonexistent/dbsock-tmp") {
		t.Fatalf("got %v, want the fix and TMPDIR named", err)
	}
}

// TestLongTMPDIRIsSaid: a TMPDIR too long for socket paths gives way to
// /tmp, and every server supplied says so.
func TestLongTMPDIRIsSaid(t *testing.T) {
	long := filepath.Join(t.TempDir(), strings.Repeat("t", 50))
	if err := os.Mkdir(long, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", long)
	l := NewLocal()
	defer l.Close()
	srv, err := l.Supply(context.Background(), Target{Name: "stub", Recipe: Recipe{Local: func(_ context.Context, l *Local, name string) (*Server, error) {
		dir, err := l.ServerDir(name)
		return &Server{Target: name, Provenance: drivers.Provenance{Origin: dir}}, err
	}}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(srv.Origin, "/tmp/dbsock-") || len(srv.Warnings) != 1 || !strings.Contains(srv.Warnings[0], long) || !strings.Contains(srv.Warnings[0], "under /tmp instead") {
		t.Fatalf("server in %s, warnings %q", srv.Origin, srv.Warnings)
	}
}

func TestExternalNeedsBothEndpoints(t *testing.T) {
	e := &External{Endpoints: map[string]Pair{
		"redis": {TCP: drivers.Endpoint{Transport: drivers.TCP, Address: "127.0.0.1:6379"}},
	}}
	if _, err := e.Supply(context.Background(), testTarget("mysql")); !errors.Is(err, ErrCannotSupply) {
		t.Fatalf("no endpoints: got %v, want ErrCannotSupply", err)
	}
	if _, err := e.Supply(context.Background(), testTarget("redis")); err == nil || errors.Is(err, ErrCannotSupply) {
		t.Fatalf("one endpoint: got %v, want a hard error asking for --redis-socket", err)
	}
}

func TestAutoFallsThrough(t *testing.T) {
	a := &Auto{Providers: []Provider{&External{}, &External{Endpoints: map[string]Pair{
		"redis": {TCP: drivers.Endpoint{Transport: drivers.TCP, Address: "127.0.0.1:1"},
			Unix: drivers.Endpoint{Transport: drivers.Unix, Address: "/tmp/r.sock"}},
	}}}}
	srv, err := a.Supply(context.Background(), testTarget("redis"))
	if err != nil || srv.TCP().Address != "127.0.0.1:1" {
		t.Fatalf("got %v, %v", srv, err)
	}
	if _, err := a.Supply(context.Background(), testTarget("mongo")); !errors.Is(err, ErrCannotSupply) {
		t.Fatalf("got %v, want ErrCannotSupply", err)
	}
}

type fixedMeter cpustat.Sample

func (m fixedMeter) Read() (cpustat.Sample, error) { return cpustat.Sample(m), nil }
func (fixedMeter) Describe() string                { return "fixed" }

// TestJoinStopsAllAndReadsAll: a server made of several stops each part
// once and reads the CPU of all.
func TestJoinStopsAllAndReadsAll(t *testing.T) {
	var stopped []string
	part := func(name string, cpu int64) *Server {
		s := &Server{Target: name, CPU: fixedMeter{CPUNs: cpu}}
		SetStop(s, func(context.Context) error { stopped = append(stopped, name); return nil })
		return s
	}
	srv := part("front", 1000).Join(part("back", 2000))
	got, err := srv.CPU.Read()
	if err != nil || got.CPUNs != 3000 {
		t.Fatalf("joined CPU %v, %v; want 3000 ns", got.CPUNs, err)
	}
	if err := srv.Stop(context.Background()); err != nil || strings.Join(stopped, ",") != "front,back" {
		t.Fatalf("stopped %v (%v), want front then back", stopped, err)
	}
	if err := srv.Stop(context.Background()); err != nil || len(stopped) != 2 {
		t.Fatalf("a second Stop stopped again: %v", stopped)
	}
}

// TestTailKeepsTheErrorLine: the line that says what went wrong is shown
// even when boilerplate follows it, and a short log is shown whole.
func TestTailKeepsTheErrorLine(t *testing.T) {
	log := "starting\n[ERROR] mariadbd: Error writing file './ibdata1' (Errcode: 28 \"No space left on device\")\n"
	for i := 0; i < 20; i++ {
		log += "[Note] shutting down part " + strings.Repeat("x", i) + "\n"
	}
	got := Tail(log, 8)
	if !strings.HasPrefix(got, "[ERROR] mariadbd: Error writing file") || !strings.Contains(got, "\n...\n") || strings.Count(got, "[Note]") != 8 {
		t.Fatalf("Tail =\n%s", got)
	}
	if got := Tail("one\ntwo", 8); got != "one\ntwo" {
		t.Fatalf("short log: %q", got)
	}
}

// TestHomebrewDiscovery: a server in a Homebrew prefix is found (PATH
// first, then the formula's keg, then its versioned kegs, newest first),
// as on a Mac with /opt/homebrew or /usr/local.
func TestHomebrewDiscovery(t *testing.T) {
	prefix := t.TempDir()
	old := HomebrewPrefixes
	HomebrewPrefixes = []string{prefix}
	defer func() { HomebrewPrefixes = old }()
	for _, keg := range []string{"fakedb@9.6", "fakedb@15", "fakedb@16"} {
		dir := filepath.Join(prefix, "opt", keg, "bin")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "fakedbd"), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	l := NewLocal()
	_, p := l.FindIn(HomebrewKegs("fakedb"), "fakedbd")
	if want := filepath.Join(prefix, "opt", "fakedb@16", "bin", "fakedbd"); p != want {
		t.Fatalf("found %q, want the newest keg's %q", p, want)
	}
	own := filepath.Join(prefix, "opt", "fakedb", "bin")
	if err := os.MkdirAll(own, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(own, "fakedbd"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, p := l.FindIn(HomebrewKegs("fakedb"), "fakedbd"); p != filepath.Join(own, "fakedbd") {
		t.Fatalf("found %q, want the formula's own keg first", p)
	}
}
