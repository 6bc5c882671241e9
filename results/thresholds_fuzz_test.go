package results

import "testing"

func FuzzParse(f *testing.F) {
	for _, s := range []string{"redis.unix.p99<2ms", "mysql.unix_speedup_p50>=1.0", "a.tcp.errors==0", "<", "x.y.z<", ".<1", "redis.unix.p99<<2ms", "redis.unix.p50<-1s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		th, err := Parse(s)
		if err != nil {
			return
		}
		if th.Target == "" || th.Metric == "" || th.Op == "" {
			t.Fatalf("Parse(%q) accepted an incomplete threshold %+v", s, th)
		}
	})
}
