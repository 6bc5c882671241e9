package placement

import (
	"reflect"
	"runtime"
	"strings"
	"testing"
)

type listCase struct {
	in      string
	want    []int
	wantErr string
}

func TestParseList(t *testing.T) {
	tests := []listCase{
		{"0", []int{0}, ""},
		{"0,0", []int{0}, ""},
		{"x", nil, "not like"},
		{"1-0", nil, "not like"},
		{"-1", nil, "not like"},
		{"99999", nil, "does not exist"},
	}
	if runtime.NumCPU() >= 2 {
		tests = append(tests, listCase{"1,0", []int{0, 1}, ""}, listCase{"0-1", []int{0, 1}, ""})
	}
	for _, tt := range tests {
		got, err := ParseList(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseList(%q) error = %v, want %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ParseList(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

func TestResolve(t *testing.T) {
	p, err := Resolve("same", "", "")
	if err != nil || FormatList(p.Client) != "0" || FormatList(p.Server) != "0" {
		t.Fatalf("same = %+v, %v", p, err)
	}
	p, err = Resolve("none", "0", "")
	if err != nil || p.Mode != "custom" || FormatList(p.Client) != "0" || p.Server != nil {
		t.Fatalf("none with --client-cpu 0 = %+v, %v", p, err)
	}
	if _, err := Resolve("diagonal", "", ""); err == nil || !strings.Contains(err.Error(), "none, same, split") {
		t.Fatalf("unknown mode: %v", err)
	}
}

func TestCommandWrapsWithTaskset(t *testing.T) {
	bin, args, err := Command(nil, "/bin/true", []string{"a"})
	if err != nil || bin != "/bin/true" || len(args) != 1 {
		t.Fatalf("unpinned: %s %v %v", bin, args, err)
	}
	bin, args, err = Command([]int{0}, "/bin/true", []string{"a"})
	if err != nil {
		t.Skipf("taskset not installed: %v", err)
	}
	if !strings.HasSuffix(bin, "taskset") || strings.Join(args, " ") != "-c 0 /bin/true a" {
		t.Fatalf("pinned: %s %v", bin, args)
	}
}

func TestAffinityOfSelf(t *testing.T) {
	cpus, err := Affinity(0)
	if err != nil || len(cpus) == 0 {
		t.Fatalf("Affinity(0) = %v, %v", cpus, err)
	}
}

func TestChoose(t *testing.T) {
	// cpus builds a machine: n cores per node, smt threads per core,
	// numbered as Linux does (all first threads, then all second threads).
	cpus := func(nodes, cores, smt int) []CPU {
		var out []CPU
		id := 0
		for th := 0; th < smt; th++ {
			for node := 0; node < nodes; node++ {
				for c := 0; c < cores; c++ {
					out = append(out, CPU{ID: id, Core: node*cores + c, Node: node})
					id++
				}
			}
		}
		return out
	}
	tests := []struct {
		name           string
		cpus           []CPU
		client, server int
		reason         string
	}{
		{"one CPU", cpus(1, 1, 1), 0, 0, "share CPU 0"},
		{"two vCPUs", cpus(1, 2, 1), 0, 0, "fewer than 4"},
		{"two cores with SMT: 4 logical, never siblings", cpus(1, 2, 2), 0, 1, "two physical cores of NUMA node 0"},
		{"eight cores: skip CPU 0", cpus(1, 8, 1), 1, 2, "not SMT siblings"},
		{"two nodes: one node", cpus(2, 4, 2), 1, 2, "NUMA node 0"},
		{"one core, four threads", cpus(1, 1, 4), 0, 0, "no NUMA node with two physical cores"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Choose(tt.cpus)
			if err != nil {
				t.Fatal(err)
			}
			if p.Mode != "auto" || !reflect.DeepEqual(p.Client, []int{tt.client}) || !reflect.DeepEqual(p.Server, []int{tt.server}) {
				t.Fatalf("got client %v server %v, want %d and %d", p.Client, p.Server, tt.client, tt.server)
			}
			if !strings.Contains(p.Reason, tt.reason) {
				t.Fatalf("reason %q, want it to say %q", p.Reason, tt.reason)
			}
			if len(tt.cpus) >= MinAutoSplit && tt.client != tt.server {
				c, s := tt.cpus[tt.client], tt.cpus[tt.server]
				if c.Core == s.Core || c.Node != s.Node {
					t.Fatalf("client %+v and server %+v share a core or sit on different nodes", c, s)
				}
			}
		})
	}
}

func TestResolveAutoOnThisMachine(t *testing.T) {
	p, err := Resolve("auto", "", "")
	if err != nil {
		t.Fatal(err)
	}
	if p.Mode != "auto" || len(p.Client) != 1 || len(p.Server) != 1 || p.Reason == "" {
		t.Fatalf("auto gave %+v, want one client CPU, one server CPU and a reason", p)
	}
}

// TestNoAffinity: where the OS has no CPU affinity (macOS), auto pins
// nothing and says why, and asking for a pinning is refused saying why.
func TestNoAffinity(t *testing.T) {
	p, err := resolve("auto", "", "", false, Choose)
	if err != nil || p.Mode != "none" || len(p.Client) != 0 || !strings.Contains(p.Reason, ErrNoAffinity.Error()) {
		t.Fatalf("auto without affinity: %+v, %v", p, err)
	}
	for _, args := range [][3]string{{"same", "", ""}, {"split", "", ""}, {"none", "0", ""}, {"auto", "", "1"}} {
		if _, err := resolve(args[0], args[1], args[2], false, Choose); err == nil || !strings.Contains(err.Error(), ErrNoAffinity.Error()) {
			t.Errorf("%v without affinity: %v", args, err)
		}
	}
	if p, err := resolve("none", "", "", false, Choose); err != nil || p.Mode != "none" {
		t.Errorf("none without affinity: %+v, %v", p, err)
	}
}

// TestChooseAtRate: at a rate, two or three CPUs split the generator from
// the servers (saying so when they are SMT siblings); one CPU is shared,
// and four or more are placed as Choose places them.
func TestChooseAtRate(t *testing.T) {
	for _, tc := range []struct {
		name           string
		cpus           []CPU
		client, server int
		reason         string
	}{
		{"one CPU", []CPU{{ID: 0}}, 0, 0, "share CPU 0"},
		{"two vCPUs", []CPU{{ID: 1, Core: 1}, {ID: 0}}, 0, 1, "auto at a rate: 2 logical CPUs, so the client runs on CPU 0 and the servers on CPU 1"},
		{"one core, two threads", []CPU{{ID: 0}, {ID: 1}}, 0, 1, "SMT siblings"},
		{"four cores", []CPU{{ID: 0}, {ID: 1, Core: 1}, {ID: 2, Core: 2}, {ID: 3, Core: 3}}, 1, 2, "not SMT siblings"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := ChooseAtRate(tc.cpus)
			if err != nil || !reflect.DeepEqual(p.Client, []int{tc.client}) || !reflect.DeepEqual(p.Server, []int{tc.server}) || !strings.Contains(p.Reason, tc.reason) {
				t.Errorf("%+v, %v; want client %d, server %d, reason with %q", p, err, tc.client, tc.server, tc.reason)
			}
		})
	}
}
