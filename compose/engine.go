package compose

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/dbsock/dbsock/drivers"
)

// Engine describes the Docker engine as dbsock's container providers see it.
type Engine struct {
	Socket    string
	Reachable bool
	Problem   string
	// Denied: the engine's socket is there, but this user may not use it.
	Denied      bool
	Version     string
	OS          string
	Rootless    bool
	Desktop     bool
	HostNetwork bool
	// Arch is the engine's machine architecture as it names it (x86_64,
	// aarch64): what a binary run in its containers must be built for.
	Arch string
}

// Unusable says why dbsock cannot use the engine ("" when it can): this
// user may not, or no engine answers.
func (e Engine) Unusable() string {
	switch {
	case e.Reachable:
		return ""
	case e.Denied:
		return fmt.Sprintf("this user may not use the Docker engine's socket %s (%s)", e.Socket, e.Problem)
	}
	return "no Docker engine answers (" + e.Problem + ")"
}

// ProbeEngine asks the engine at $DOCKER_HOST (unix://) or
// /var/run/docker.sock for /info.
func ProbeEngine(ctx context.Context, timeout time.Duration) Engine {
	d := Engine{Socket: "/var/run/docker.sock"}
	if h := os.Getenv("DOCKER_HOST"); strings.HasPrefix(h, "unix://") {
		d.Socket = strings.TrimPrefix(h, "unix://")
	} else if h != "" {
		d.Problem = "DOCKER_HOST is " + h + ": doctor only probes unix:// engines"
		return d
	}
	client := &http.Client{Timeout: timeout, Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var dl net.Dialer
			return dl.DialContext(ctx, "unix", d.Socket)
		}}}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://docker/info", nil)
	resp, err := client.Do(req)
	if err != nil {
		d.Denied = errors.Is(err, syscall.EACCES)
		d.Problem = drivers.Explain(unwrapURL(err), drivers.Endpoint{Transport: drivers.Unix, Address: d.Socket}).Error()
		return d
	}
	defer resp.Body.Close()
	var info struct {
		ServerVersion   string
		OperatingSystem string
		OSType          string
		Architecture    string
		SecurityOptions []string
	}
	if err := json.NewDecoder(resp.Body).Decode(&info); err != nil {
		d.Problem = "the engine's /info did not decode: " + err.Error()
		return d
	}
	d.Reachable = true
	d.Version, d.OS, d.Arch = info.ServerVersion, info.OperatingSystem, info.Architecture
	for _, o := range info.SecurityOptions {
		if strings.Contains(o, "rootless") {
			d.Rootless = true
		}
	}
	d.Desktop = strings.Contains(info.OperatingSystem, "Docker Desktop")
	d.HostNetwork = info.OSType == "linux" && !d.Rootless && !d.Desktop
	return d
}

func unwrapURL(err error) error {
	var ue interface{ Unwrap() error }
	if errors.As(err, &ue) {
		if inner := ue.Unwrap(); inner != nil {
			return inner
		}
	}
	return err
}
