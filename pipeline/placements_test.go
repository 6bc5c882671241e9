package pipeline

import (
	"bytes"
	"context"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/internal/cpustat"
	"github.com/dbsock/dbsock/internal/placement"
	"github.com/dbsock/dbsock/reports"
	"github.com/dbsock/dbsock/results"
	"github.com/dbsock/dbsock/supply"
	"github.com/dbsock/dbsock/targets"
)

// placedProvider supplies a server whose one process is a real child
// (sleep) that the run's placements pin: placedDriver reads where it
// runs.
type placedProvider struct {
	fakeProvider
	t   *testing.T
	cmd *exec.Cmd
}

func (p *placedProvider) Supply(ctx context.Context, t supply.Target) (*supply.Server, error) {
	srv, err := p.fakeProvider.Supply(ctx, t)
	if err != nil {
		return nil, err
	}
	p.cmd = exec.Command("sleep", "120")
	if err := p.cmd.Start(); err != nil {
		return nil, err
	}
	p.t.Cleanup(func() { p.cmd.Process.Kill(); p.cmd.Wait() })
	srv.PID, srv.CPU = p.cmd.Process.Pid, cpustat.NewTree(p.cmd.Process.Pid, "the fake server")
	return srv, nil
}

// placedDriver is placement-sensitive, as Go's client on some hosts is:
// with the server on the client's CPU (shared) the socket is faster, on
// another CPU (split) TCP is.
type placedDriver struct {
	fakeDriver
	p *placedProvider
}

func (d *placedDriver) Open(ctx context.Context, ep drivers.Endpoint) (drivers.Conn, error) {
	cpus, err := placement.Affinity(d.p.cmd.Process.Pid)
	if err != nil {
		return nil, err
	}
	fast, slow := 20*time.Microsecond, 40*time.Microsecond
	if slices.Equal(cpus, []int{0}) == (ep.Transport == drivers.Unix) {
		return &fakeConn{d: &d.fakeDriver, t: ep.Transport, cost: fast}, nil
	}
	return &fakeConn{d: &d.fakeDriver, t: ep.Transport, cost: slow}, nil
}

// TestAutoPlacementsThatDisagreeAreSaid: the placements --placement auto
// chooses at rest on two CPUs (placement.ChooseBoth) give each case a
// verdict per placement, and where a placement-sensitive server makes them
// contradict each other, the report's words say so beside each verdict.
func TestAutoPlacementsThatDisagreeAreSaid(t *testing.T) {
	if !placement.Supported {
		t.Skip("no CPU affinity on this OS")
	}
	cpus, err := placement.Available()
	if err != nil || !slices.Contains(cpus, 0) || !slices.Contains(cpus, 1) {
		t.Skipf("needs CPUs 0 and 1 (this process may use %v, %v)", cpus, err)
	}
	places, err := placement.ChooseBoth([]placement.CPU{{ID: 0}, {ID: 1, Core: 1}})
	if err != nil || len(places) != 2 {
		t.Fatalf("ChooseBoth on two CPUs: %v, %v; want shared and split", places, err)
	}
	p := &placedProvider{t: t}
	pl := plan(&fakeProvider{}, &fakeDriver{name: "a"})
	pl.Provider = p
	d := &placedDriver{fakeDriver: fakeDriver{name: "a"}, p: p}
	pl.Targets[0].Settings = targets.Own(func(int) drivers.Driver { return d })
	pl.Loop.Rounds, pl.Instances = 1, 9
	pl.Placement, pl.Placements, pl.PlacementsAuto = places[0], places, true
	rep, err := Run(context.Background(), pl)
	if err != nil {
		t.Fatal(err)
	}
	verdicts := map[string]results.VerdictKind{}
	for _, s := range rep.Summary {
		verdicts[s.Placement] = s.Against(drivers.Unix).VerdictKind
	}
	if verdicts["same"] != results.UnixFaster || verdicts["split"] != results.TCPFaster {
		t.Fatalf("verdicts by placement %v: want the socket faster shared and TCP split", verdicts)
	}
	var md bytes.Buffer
	if err := reports.Markdown(&md, rep); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"placed shared", "placed split", "The placements give a over unix different answers",
		"placed shared (client CPU 0, servers CPU 0): the socket faster", "placed split (client CPU 0, servers CPU 1): TCP faster"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("the report does not say %q:\n%s", want, md.String())
		}
	}
}
