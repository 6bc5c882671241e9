package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
)

// BenchmarkPeakRSS runs "dbsock run echo" with a large N (10,000,000, or
// $DBSOCK_BENCH_N) as its own process and reports its peak resident set
// size: memory must not grow with N (histograms, not sample slices).
func BenchmarkPeakRSS(b *testing.B) {
	n := 10_000_000
	if v, err := strconv.Atoi(os.Getenv("DBSOCK_BENCH_N")); err == nil && v > 0 {
		n = v
	}
	bin := filepath.Join(b.TempDir(), "dbsock")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	out := filepath.Join(b.TempDir(), "r.json")
	var maxKB int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		cmd := exec.Command(bin, "run", "echo", "--n", strconv.Itoa(n), "--warmup", "0", "--instances", "1", "--rounds", "1",
			"--placement", "same", "-q", "--out", out)
		if msg, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("dbsock run echo: %v\n%s", err, msg)
		}
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok && ru.Maxrss > maxKB {
			maxKB = ru.Maxrss
		}
	}
	b.ReportMetric(float64(n), "ops-per-transport")
	b.ReportMetric(float64(maxKB)/1024, "peak-RSS-MB")
}
