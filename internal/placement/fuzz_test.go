package placement

import (
	"runtime"
	"testing"
)

func FuzzParseList(f *testing.F) {
	for _, s := range []string{"0", "0,1", "0-1", "1-0", "", ",", "-", "0--1", "99999999999999999999", " 0 , 1 "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cpus, err := ParseList(s)
		if err != nil {
			return
		}
		for i, c := range cpus {
			if c < 0 || c >= runtime.NumCPU() || (i > 0 && cpus[i-1] >= c) {
				t.Fatalf("ParseList(%q) = %v: out of range or not sorted and unique", s, cpus)
			}
		}
	})
}
