package supply

import (
	"context"
	"maps"

	"github.com/dbsock/dbsock/drivers"
)

// Target is what a provider is asked to supply: a target's name and the
// recipe for its server. The registry (package targets) builds it.
type Target struct {
	// Name is the target's name, e.g. mysql.
	Name string
	// SocketFlag is the flag that gives the socket of a server the user
	// runs ("--NAME-socket" when empty).
	SocketFlag string
	Recipe
	// Serving, when set, says what serves the two endpoints when it is
	// more than one server process, whichever provider supplies it (the
	// report says so).
	Serving string
	// SeedEach says that the two endpoints reach two instances of the
	// server, each with its own data: the data is seeded over both.
	SeedEach bool
	// Volatile says that the server keeps no data over a restart (no
	// persistence, as dbsock runs its in-memory servers): after each restart
	// (--instances) the data is seeded again.
	Volatile bool
	// Hop says that a hop (a pooler) stands in front of its server: the
	// paths with a hop's leg (drivers.PathInfo.Hop) are its alone.
	Hop bool
}

// Flag returns t's socket flag.
func (t Target) Flag() string {
	if t.SocketFlag != "" {
		return t.SocketFlag
	}
	return "--" + t.Name + "-socket"
}

// Recipe says how dbsock's providers start one kind of server. A nil field
// means that provider cannot start it.
type Recipe struct {
	// Local starts a private server from binaries on this machine.
	Local func(ctx context.Context, l *Local, name string) (*Server, error)
	// Container starts it from an image (providers docker and compose).
	Container *Container
}

// Container is how a server runs from an image: which image, and the
// command line, environment and endpoints that image takes. The compose
// provider finds the same service, named after the target, in compose.yaml.
type Container struct {
	// Image is the official image, pinned by tag; Offline is the image
	// "make images" builds for machines without a registry, which stands
	// in for it when it cannot be had.
	Image, Offline string
	// OfflineBuilt says how Offline was built, for the report ("": from
	// Debian's packages, by make images).
	OfflineBuilt string
	// UID is the user the official image runs its server as (999 for
	// most; the offline image runs it as the same).
	UID int
	// Spec builds the container's command line (SpecFor says for what).
	Spec func(SpecFor) (ContainerSpec, error)
	// Rotate, when set, changes the passwords of the accounts the image's
	// entrypoint created to the run's (those of srv's endpoints) as soon as
	// the server is up: the image is handed bootstrap passwords (its Secrets
	// files, and compose.yaml's, given here by name), which an image may
	// leave in its server's environment, and which no account accepts once
	// Rotate returns. It is probed with the readiness check, so it fails
	// while the server is not up yet, and returns nil when the accounts
	// already take the run's password (after a restart).
	Rotate func(ctx context.Context, srv *Server, bootstrap map[string]string) error
	// Hops, when set, names the legs of a hop's endpoints once its
	// container is up (Target.Hop: a pooler in front of its server in the
	// same container), and adds the endpoints of the paths with a hop's
	// leg it serves; for a hop in a container of its own (Behind), whose
	// endpoints its spec names (ContainerSpec.HopPaths), it records what
	// the hop's driver needs to know of them. The docker provider calls
	// it, srv.SocketDir the socket directory as dbsock reaches it.
	Hops func(srv *Server)
	// Behind, when set, makes this image a hop's in a container of its own
	// in front of Behind's server (Target.Hop): the docker provider
	// supplies that server first, from its own image, then starts this one
	// on the same loopback (the host's network, or the namespace dbsock
	// runs in), that server's socket directory mounted at /behind, its
	// endpoints as the hop reaches them in SpecFor.Behind. The two are one
	// Server, the hop's CPU apart (Server.HopCPU). It has no compose
	// service.
	Behind *Target
	// Described, when set, is the description Spec comes from, which
	// compose.yaml's service comes from too (Description.Recipe sets it).
	Described *Description
}

// SpecFor is what a container's spec is built for.
type SpecFor struct {
	Port int    // the server's TCP port
	Dir  string // its socket directory on the host, /sock in the container
	Bind string // the addresses it listens on, comma-separated
	// TLS, when its files are set, are the run's certificate, key and CA
	// as the container sees them (in /sock), for the tls path; TLSPort is
	// a second free port, for a server that serves TLS on a listener of
	// its own.
	TLS     TLSFiles
	TLSPort int
	// Behind, for a hop's container (Container.Behind), are the endpoints
	// of the server it stands in front of, as the hop reaches them: its
	// TCP address on the shared loopback, its socket under /behind, with
	// no account (the hop's endpoints are given the server's).
	Behind drivers.Pair
}

// BehindDir is where a hop's container (Container.Behind) finds the
// socket directory of the server it stands in front of.
const BehindDir = "/behind"

// ContainerSpec is how one container is started and reached. Passwords
// never go on a command line: through the environment the image reads, or
// a config file in the private socket dir.
type ContainerSpec struct {
	Cmd    []string
	Env    map[string]string
	Socket string // file name in the socket dir
	// Config is a file in the socket dir holding a secret, removed once the
	// server is up.
	Config string
	// Secrets are files that hand the server its passwords (a name in
	// the socket dir, its contents): the image's VAR_FILE variables in Env
	// name them (/sock/NAME). They are written before the container
	// starts (see writeSecrets for their mode), read by the image's
	// entrypoint, removed once the server is ready and put back while it
	// restarts: a password is never in the container's configuration
	// (docker inspect) or environment.
	Secrets                  map[string]string
	User, Password, Database string
	// TLSPort is the port the server serves TLS on when its spec turned
	// TLS on (SpecFor.Port or SpecFor.TLSPort); 0: it did not.
	TLSPort int
	// NoTLS, when it did not although given the files, says why (it may
	// name a setting, as setting.Err makes it).
	NoTLS error
	// Ready, when set, is probed until it succeeds (e.g. a real login).
	Ready func(context.Context, *Server) error
	// RunAs, when set, is the user the container's processes run as
	// ("uid:gid"; "": the image's).
	RunAs string
	// HopPaths, for a hop's container (Container.Behind), are its
	// endpoints on the paths it serves (tcp and unix among them, at Port
	// and Socket), each with its hop's leg (Endpoint.Hop): a TCP address
	// as dbsock dials it, a socket by its file name in the socket dir.
	// The provider gives each the account of the server behind.
	HopPaths []drivers.Endpoint
}

// ChildRecipe is the recipe of one of dbsock's own servers (package
// child), run as a local child process: they have no image.
func ChildRecipe(kind string) Recipe {
	return Recipe{Local: func(ctx context.Context, l *Local, name string) (*Server, error) {
		return l.childServer(ctx, name, kind)
	}}
}

// Rotating is ready preceded by rotate, with the bootstrap passwords.
func Rotating(rotate func(context.Context, *Server, map[string]string) error, bootstrap map[string]string, ready func(context.Context, *Server) error) func(context.Context, *Server) error {
	if rotate == nil {
		return ready
	}
	bootstrap = maps.Clone(bootstrap)
	return func(ctx context.Context, srv *Server) error {
		if err := rotate(ctx, srv, bootstrap); err != nil {
			return err
		}
		if ready == nil {
			return nil
		}
		return ready(ctx, srv)
	}
}

// LoginReady is a ContainerSpec.Ready that holds until d can ask the
// server what it is over both endpoints: a real login, which an image
// that first runs a temporary server for set-up (as SQL servers' images
// do) does not allow before it is done.
func LoginReady(d drivers.Driver) func(context.Context, *Server) error {
	return func(ctx context.Context, srv *Server) error {
		for _, ep := range []drivers.Endpoint{srv.TCP(), srv.Unix()} {
			if _, err := d.Info(ctx, ep); err != nil {
				return err
			}
		}
		return nil
	}
}
