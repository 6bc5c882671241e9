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
