package redis

import "testing"

// TestGetCalls reads GET's calls from INFO commandstats as Redis 7.0
// writes it, and 0 before any GET.
func TestGetCalls(t *testing.T) {
	info := "# Commandstats\r\ncmdstat_getex:calls=9,usec=1,usec_per_call=0.1,rejected_calls=0,failed_calls=0\r\n" +
		"cmdstat_get:calls=3012,usec=4190,usec_per_call=1.39,rejected_calls=0,failed_calls=0\r\ncmdstat_info:calls=2,usec=80\r\n"
	if n, err := getCalls(info); err != nil || n != 3012 {
		t.Errorf("getCalls = %d, %v; want 3012", n, err)
	}
	if n, err := getCalls("# Commandstats\r\ncmdstat_info:calls=2,usec=80\r\n"); err != nil || n != 0 {
		t.Errorf("no GET yet: getCalls = %d, %v; want 0", n, err)
	}
	if _, err := getCalls("cmdstat_get:calls=x,usec=1\r\n"); err == nil {
		t.Error("calls=x: no error")
	}
}
