// Package targets is dbsock's registry of what it can measure. Each target
// lives in its own package (targets/mysql, targets/redis, ...), which
// registers itself once, in init: its name, what one op is, its settings
// (a typed value with json tags, and the flags the command binds on its
// fields), its client driver, its server recipe, its doctor probe and the
// client library the report names. Package targets/all imports every one
// of them; the CLI, the pipeline, help texts and the environment's driver
// versions all read this registry.
package targets

import (
	"context"
	"fmt"
	"net"
	"reflect"
	"sort"
	"strings"
	"sync"

	"github.com/dbsock/dbsock/agents"
	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/internal/setting"
	"github.com/dbsock/dbsock/supply"
)

// Target is everything dbsock knows about one thing it can measure.
type Target struct {
	// Target is what a provider is asked to supply: the name users call
	// it by (e.g. mysql), the flag that gives the socket of a server the
	// user runs, and the Recipe by which providers start its server.
	supply.Target
	// Order places it in listings and reports (lower first).
	Order int
	// Short says in a few words what one op is, for help texts.
	Short string
	// ServedBy says what serves it, for "dbsock targets" and help.
	ServedBy string
	// InAll makes it part of "dbsock run all".
	InAll bool
	// Library is the module path of the client library whose version the
	// report names ("" when it is the standard library).
	Library string
	// Own marks dbsock's own servers (echo, grpc, http): they have no
	// external endpoints.
	Own bool
	// InFrontOf, for a target whose server is a hop in front of another
	// target's (supply.Target.Hop: a pooler), is that other target:
	// "dbsock run InFrontOf --via Name" measures this one.
	InFrontOf string
	// ViaOnly, for such a hop, says that it serves neither the tcp nor
	// the unix route (its leg to the server is never the server's
	// socket), so that the run's default paths would measure nothing:
	// named alone, it is run as "dbsock run InFrontOf --via ViaName" is.
	ViaOnly bool
	// Via, for such a hop, is the name --via takes for it when several
	// targets are one hop in front of different servers (haproxy in front
	// of redis, of mysql): "" for its own name (ViaName).
	Via string
	// Product names the hop's server for sentences (HopProcesses): ""
	// for its doctor's name, or its own.
	Product string
	// AgentsAs, when set, is the target whose agents measure it: a hop
	// whose clients speak the protocol of the server behind it, as they
	// would to that server ("" for its own name: AgentName).
	AgentsAs string
	// Layer, when set, makes the target a layer of --explain's
	// decomposition (results.LayerKernel, results.LayerRuntime).
	Layer string
	// Settings returns a new value of the target's settings at their
	// defaults (see Settings).
	Settings func() Settings
	// Flags are the fields of its settings that the command sets from
	// flags, in the order its help lists them.
	Flags []Flag
	// Doctor is what "dbsock doctor" knows of its sockets (nil: nothing).
	Doctor *Doctor
	// Agents is what it tells every client stack's agent: why none is
	// measured on its tls path (nil: nothing). What each stack has for it,
	// its libraries, is in the stack's agents/NAME/stack.json.
	Agents *agents.Support
	// Help says how ops are written for it, for help texts.
	Help Help
	// Kind, when set, is what tells a server of this target apart when a
	// client's first contact fails, and how it opens its socket to others
	// (drivers.Kind; Register registers it, at the target's Order).
	Kind *drivers.Kind
	// Quiet, when set, stops the client library from printing log lines
	// of its own: the command reports failures itself, with what to do.
	Quiet func()
}

// Help says how the ops of one target are written, for the help of the
// flags that take them; "" where one does not apply.
type Help struct {
	// Query is how the user's own op (--query) is written, with one key
	// placeholder, e.g. "SQL with ?".
	Query string
	// KeysQuery is what a --keys-from query:TEXT is, e.g. "SQL returning
	// keys in its first column".
	KeysQuery string
	// Update is what dbsock's op does under --op update, e.g. "UPDATE ...
	// SET n = n + 1".
	Update string
	// Pipeline is how a batch of lookups (--pipeline) is sent, e.g. "the
	// client's pipeline".
	Pipeline string
}

// Doctor is what "dbsock doctor" knows of one database's sockets.
type Doctor struct {
	// Name is the database family, e.g. "MySQL/MariaDB".
	Name string
	// WellKnown are the places packages and images put its sockets.
	WellKnown []string
	// Match says whether a socket's file name (lower case) looks like this
	// database's.
	Match func(base string) bool
	// Localhost says how common clients read "localhost" for it.
	Localhost string
	// Answer asks the server on c what it is, without credentials; nil
	// means doctor does not ask.
	Answer func(ctx context.Context, c net.Conn, path string) string
}

// Settings are one invocation's settings of a target: a pointer to a struct
// whose exported fields are the settings, with their defaults as
// Target.Settings returns them. What the fields hold with json tags is what
// dbsock gives its own agent elsewhere (dbsock agent --settings, in the
// client container), which decodes it into the same type; a server the
// user runs (Server) is left out of it, as each connection's open message
// carries that server's endpoint itself.
type Settings interface {
	// Validate checks the settings; its errors name the fields (Field).
	Validate() error
	// Driver returns the driver for one case's workload (value size,
	// rows).
	Driver(w drivers.Workload) drivers.Driver
	// External returns the endpoints of a server the user runs, as given
	// by the settings and the environment (a zero Pair when none were
	// given).
	External() (supply.Pair, error)
}

// QueryOnly is an optional capability of Settings with fields that apply
// only to the user's own op: NeedQuery names those set, which a run
// refuses without a query of the user's for the target.
type QueryOnly interface {
	NeedQuery() []setting.Field
}

// Flag is one field of a target's settings that the command sets from a
// flag: the field's Go name in the settings struct (a string, int or bool
// field), the flag's name without "--" and its help. The flag's default
// is the field's value in the target's defaults.
type Flag struct {
	Field, Name, Help string
}

// Field names the field of target's settings that errors name, e.g.
// Field("redis", "Protocol") is "redis.Settings.Protocol" (field Protocol
// of package redis's Settings); the command words it as its flag.
func Field(target, field string) setting.Field { return setting.Of(target, field) }

// FieldOf splits a Field into its target and the settings' field; ok is
// false for a field that is no target's.
func FieldOf(f setting.Field) (target, field string, ok bool) {
	target, field, ok = strings.Cut(string(f), ".Settings.")
	return target, field, ok && target != "" && field != ""
}

// ViaName is the name --via takes for t (Via, or its own).
func (t *Target) ViaName() string {
	if t.Via != "" {
		return t.Via
	}
	return t.Name
}

// AgentName is the target name t's agents are started for (AgentsAs, or
// its own).
func (t *Target) AgentName() string {
	if t.AgentsAs != "" {
		return t.AgentsAs
	}
	return t.Name
}

// Supply is what a provider is asked for to serve t.
func (t *Target) Supply() supply.Target { return t.Target }

var (
	mu       sync.Mutex
	registry = map[string]*Target{}
)

// Register adds t to the registry; a second target of the same name is a
// programming error and panics at start-up.
func Register(t Target) {
	mu.Lock()
	defer mu.Unlock()
	if t.Name == "" || t.Settings == nil || t.Local == nil {
		panic("targets: Register needs a Name, Settings and a local recipe")
	}
	if err := checkFlags(t); err != nil {
		panic("targets: " + err.Error())
	}
	if _, dup := registry[t.Name]; dup {
		panic(fmt.Sprintf("targets: %s registered twice", t.Name))
	}
	registry[t.Name] = &t
	if t.Kind != nil {
		k := *t.Kind
		k.Order = t.Order
		drivers.RegisterKind(k)
	}
}

// checkFlags checks that each of t's flags names a string, int or bool
// field of its settings, once.
func checkFlags(t Target) error {
	v := reflect.ValueOf(t.Settings())
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return fmt.Errorf("%s's settings are a %s, not a pointer to a struct", t.Name, v.Type())
	}
	seen := map[string]bool{}
	for _, f := range t.Flags {
		fv := v.Elem().FieldByName(f.Field)
		switch {
		case !fv.IsValid() || !fv.CanSet():
			return fmt.Errorf("%s's flag --%s names %s, which is no exported field of its settings", t.Name, f.Name, f.Field)
		case fv.Kind() != reflect.String && fv.Kind() != reflect.Int && fv.Kind() != reflect.Bool:
			return fmt.Errorf("%s's flag --%s names field %s, a %s (a flag sets a string, int or bool)", t.Name, f.Name, f.Field, fv.Kind())
		case seen[f.Name] || f.Name == "" || f.Help == "":
			return fmt.Errorf("%s's flag %q is given twice or without its help", t.Name, f.Name)
		}
		seen[f.Name] = true
	}
	return nil
}

// Explainers lists the targets that are layers of --explain's
// decomposition, in report order.
func Explainers() []string {
	var out []string
	for _, t := range List() {
		if t.Layer != "" {
			out = append(out, t.Name)
		}
	}
	return out
}

// Lookup returns the target called name.
func Lookup(name string) (*Target, bool) {
	mu.Lock()
	defer mu.Unlock()
	t, ok := registry[name]
	return t, ok
}

// List returns every registered target in report order.
func List() []*Target {
	mu.Lock()
	defer mu.Unlock()
	out := make([]*Target, 0, len(registry))
	for _, t := range registry {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Order != out[j].Order {
			return out[i].Order < out[j].Order
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// Hops lists the targets whose servers are hops in front of another
// target's (InFrontOf), in report order.
func Hops() []*Target {
	var out []*Target
	for _, t := range List() {
		if t.Hop && t.InFrontOf != "" {
			out = append(out, t)
		}
	}
	return out
}

// HopProcesses maps each hop's command name (the name --via takes for it,
// as its server's process is called) to its product's name, for the
// external provider's search for proxies (supply.External.Hops).
func HopProcesses() map[string]string {
	out := map[string]string{}
	for _, t := range Hops() {
		product := t.ViaName()
		if t.Doctor != nil && t.Doctor.Name != "" {
			product = t.Doctor.Name
		}
		if t.Product != "" {
			product = t.Product
		}
		out[t.ViaName()] = product
	}
	return out
}

// HopVia is the hop target that --via name puts in front of target's
// server.
func HopVia(name, target string) (*Target, bool) {
	for _, t := range Hops() {
		if t.ViaName() == name && t.InFrontOf == target {
			return t, true
		}
	}
	return nil, false
}

// HopPhrase names the hops for a sentence: "pgbouncer in front of
// postgres, haproxy in front of redis or mysql", joined by ", ".
func HopPhrase() string {
	var names []string
	fronts := map[string][]string{}
	for _, t := range Hops() {
		if fronts[t.ViaName()] == nil {
			names = append(names, t.ViaName())
		}
		fronts[t.ViaName()] = append(fronts[t.ViaName()], t.InFrontOf)
	}
	var out []string
	for _, n := range names {
		out = append(out, n+" in front of "+strings.Join(fronts[n], " or "))
	}
	return strings.Join(out, ", ")
}

// Names lists the targets' names in report order.
func Names() []string {
	var out []string
	for _, t := range List() {
		out = append(out, t.Name)
	}
	return out
}

// All lists what "all" means, in report order.
func All() []string {
	var out []string
	for _, t := range List() {
		if t.InAll {
			out = append(out, t.Name)
		}
	}
	return out
}

// Quiet silences every target's client library (see Target.Quiet); the
// command calls it once, a library user need not.
func Quiet() {
	for _, t := range List() {
		if t.Quiet != nil {
			t.Quiet()
		}
	}
}

// Libraries lists the client libraries' module paths.
func Libraries() []string {
	var out []string
	for _, t := range List() {
		if t.Library != "" {
			out = append(out, t.Library)
		}
	}
	return out
}

// DoctorKinds lists what doctor knows of each database's sockets.
func DoctorKinds() []Doctor {
	var out []Doctor
	for _, t := range List() {
		if t.Doctor != nil {
			out = append(out, *t.Doctor)
		}
	}
	return out
}

// Containers lists the targets with an image, as the compose provider's
// services.
func Containers() []supply.Target {
	var out []supply.Target
	for _, t := range List() {
		if t.Container != nil {
			out = append(out, t.Supply())
		}
	}
	return out
}

// Own gives the Settings of a target that has no settings of its own and
// whose server is dbsock's (no external endpoints): as JSON, {}.
func Own(driver func(valueSize int) drivers.Driver) func() Settings {
	return func() Settings { return &own{driver: driver} }
}

type own struct {
	driver func(valueSize int) drivers.Driver
}

func (*own) Validate() error                            { return nil }
func (o *own) Driver(w drivers.Workload) drivers.Driver { return o.driver(w.ValueSize) }
func (*own) External() (supply.Pair, error)             { return supply.Pair{}, nil }

func init() { agents.SetFamilies(Families) }

// Families maps each registered target an agent can measure (its driver
// says its lookup as an agent does it, drivers.AgentOp) to its protocol
// family, which client stacks are declared and started by (agents).
func Families() map[string]string {
	out := map[string]string{}
	for _, t := range List() {
		if t.AgentsAs != "" {
			continue // a proxy's agents are its server's (AgentName): the stacks claim, and the suite checks, the server
		}
		if op, ok := t.Settings().Driver(drivers.Workload{Rows: 1}).(drivers.AgentOp); ok {
			out[t.Name] = op.AgentOp().Family
		}
	}
	return out
}
