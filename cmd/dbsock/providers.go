package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/distribution/reference"

	"github.com/dbsock/dbsock/compose"
	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/supply"
	"github.com/dbsock/dbsock/targets"
)

// newProvider builds the provider --provider names, for targets names.
func (o *runOptions) newProvider(names []string, serverCPUs []int) (supply.Provider, error) {
	pairs, err := o.externalEndpoints()
	if err != nil {
		return nil, err
	}
	images, err := parseImages(o.servers.images)
	if err != nil {
		return nil, err
	}
	if len(pairs) > 0 && o.servers.provider != "external" && o.servers.provider != "auto" {
		for name := range pairs {
			return nil, usagef("--%s-addr and its socket name a server you run; they apply to --provider external or auto, not %s", name, o.servers.provider)
		}
	}
	if o.servers.provider == "docker" || o.servers.provider == "compose" {
		for _, name := range names {
			if t, _ := targets.Lookup(name); t.Own && !slices.Contains(o.layers, name) {
				return nil, usagef("target %s is dbsock's own server and runs as a child process, not a container; use --provider local or auto for it", name)
			}
		}
	}
	if o.servers.provider == "external" {
		for _, name := range names {
			t, _ := targets.Lookup(name)
			if slices.Contains(o.layers, name) {
				continue // from the local provider (layered)
			}
			if t.Own {
				return nil, usagef("target %s is dbsock's own server: it has no external endpoints; use --provider local or auto", name)
			}
			if !pairs[name].Given() {
				return nil, usagef("--provider external needs --%s-addr and %s for target %s", name, t.Supply().Flag(), name)
			}
		}
	}
	local := supply.NewLocal()
	local.ServerCPUs = serverCPUs
	if len(images) > 0 {
		switch o.servers.provider {
		case "local", "external":
			return nil, usagef("--image chooses container images; it does not apply to --provider %s (use --provider docker or compose)", o.servers.provider)
		case "auto":
			return o.layered(o.newDocker(images, serverCPUs), local), nil // an image was asked for: containers, or an error saying why not
		}
	}
	pids, err := parseServerPIDs(o.servers.pids, names)
	if err != nil {
		return nil, err
	}
	if len(pids) > 0 && o.servers.provider != "external" && o.servers.provider != "auto" {
		return nil, usagef("--server-pid names a server you run; it applies to --provider external or auto, not %s", o.servers.provider)
	}
	for name, pid := range pids {
		if pid == 1 || pid == os.Getpid() {
			return nil, usagef("--server-pid %s=%d names %s, whose process tree is not the server's: the server CPU per op would count every process in it; give the pid of the server itself", name, pid, map[bool]string{true: "the first process of this machine (or container)", false: "dbsock itself"}[pid == 1])
		}
		if addr := pairs[name].TCP.Address; addr != "" {
			if err := supply.Owns(pid, addr); err != nil {
				return nil, usagef("--server-pid %s=%d: %v; give the pid of the server listening there", name, pid, err)
			}
		}
	}
	external := &supply.External{Endpoints: pairs, ServerPIDs: pids, Hops: targets.HopProcesses()}
	switch o.servers.provider {
	case "local":
		return local, nil
	case "docker":
		return o.layered(o.newDocker(images, serverCPUs), local), nil
	case "compose":
		c := compose.NewCompose(targets.Containers())
		c.Images, c.Keep, c.ServerCPUs = images, o.servers.keep, serverCPUs
		c.Routes, c.Service = o.routes()
		return o.layered(c, local), nil
	case "external":
		return o.layered(external, local), nil
	}
	return &supply.Auto{Providers: []supply.Provider{external, o.newDocker(images, serverCPUs), local}}, nil
}

// layered is p, with the targets --explain added (dbsock's own servers,
// which run as local child processes) supplied by local instead.
func (o *runOptions) layered(p supply.Provider, local *supply.Local) supply.Provider {
	if len(o.layers) == 0 {
		return p
	}
	return &layeredProvider{Provider: p, local: local, layers: o.layers}
}

type layeredProvider struct {
	supply.Provider
	local  *supply.Local
	layers []string
}

func (l *layeredProvider) Supply(ctx context.Context, t supply.Target) (*supply.Server, error) {
	if slices.Contains(l.layers, t.Name) {
		return l.local.Supply(ctx, t)
	}
	return l.Provider.Supply(ctx, t)
}

func (l *layeredProvider) Close() error { return errors.Join(l.Provider.Close(), l.local.Close()) }

// CannotServe implements supply.PathServer: the provider it layers on
// says.
func (l *layeredProvider) CannotServe(t drivers.Transport, targets []string) error {
	if ps, ok := l.Provider.(supply.PathServer); ok {
		return ps.CannotServe(t, targets)
	}
	return nil
}

// parseServerPIDs reads the --server-pid TARGET=PID flags, each for a
// target of the run (names).
func parseServerPIDs(specs []string, names []string) (map[string]int, error) {
	pids := map[string]int{}
	for _, s := range specs {
		name, v, ok := strings.Cut(s, "=")
		t, known := targets.Lookup(name)
		pid, err := strconv.Atoi(v)
		if !ok || !known || t.Own || err != nil || pid <= 0 {
			return nil, usagef("--server-pid %q is not TARGET=PID with a database target and a process id (e.g. redis=1234)", s)
		}
		if !slices.Contains(names, name) {
			return nil, usagef("--server-pid %q is for target %s, which this run does not measure (it runs %s)", s, name, strings.Join(names, ", "))
		}
		if _, dup := pids[name]; dup {
			return nil, usagef("--server-pid is given twice for %s; give one", name)
		}
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err != nil {
			return nil, usagef("--server-pid %q: no process %d is running", s, pid)
		}
		pids[name] = pid
	}
	return pids, nil
}

// parseImages reads the --image TARGET=REF flags.
func parseImages(specs []string) (map[string]string, error) {
	images := map[string]string{}
	for _, s := range specs {
		name, ref, ok := strings.Cut(s, "=")
		t, known := targets.Lookup(name)
		if !ok || !known || t.Container == nil || ref == "" {
			return nil, usagef("--image %q is not TARGET=REF with TARGET one of %s (e.g. mysql=dbsock/mariadb:10.11)", s, strings.Join(containerNames(), ", "))
		}
		if _, err := reference.ParseNormalizedNamed(ref); err != nil {
			return nil, usagef("--image %q: %q is not an image reference such as mysql:8.4 or dbsock/mariadb:10.11 (%v)", s, ref, err)
		}
		images[name] = ref
	}
	return images, nil
}

// checkHome refuses, before anything starts, a run of containers that
// cannot work from the container dbsock runs in (supply.CheckHome); on
// the host it asks nothing.
func (o *runOptions) checkHome() error {
	needs := o.engineNeeds()
	if needs.Provider == "" && o.client.place != "container" {
		return nil
	}
	routes, _ := o.routes()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := supply.CheckHome(ctx, supply.DockerSocket(), needs, o.client.place, routes); err != nil {
		return usagef("%s", inWords(err))
	}
	return nil
}
