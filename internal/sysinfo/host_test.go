package sysinfo

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestHostFactsAreRead(t *testing.T) {
	var e Environment
	e.HostFacts("lab-a")
	if e.Host != "lab-a" {
		t.Errorf("host %q, want lab-a", e.Host)
	}
	if e.SyscallNs <= 0 || e.FactsNs <= 0 {
		t.Errorf("syscall %v ns, facts %v ns: want both measured", e.SyscallNs, e.FactsNs)
	}
	if _, err := os.Stat("/proc/cpuinfo"); err == nil && (e.CPU == nil || e.KernelCmdline == "") {
		t.Errorf("cpu %+v, cmdline %q: want both read on Linux", e.CPU, e.KernelCmdline)
	}
	t.Logf("host facts took %.2f ms; getppid %.0f ns; wake-up round trip %.0f ns on one CPU, %.0f ns across two", float64(e.FactsNs)/1e6, e.SyscallNs, e.WakeSameCPUNs, e.WakeCrossCPUNs)
	var d Environment
	if d.HostFacts(""); d.Host == "" {
		t.Error("no label: want the hostname")
	}
}

func TestVulnerabilitiesAreEachFilesFirstLine(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"meltdown":             "Mitigation: PTI\n",
		"spec_rstack_overflow": "Vulnerable: No microcode\nmore\n",
		"huge":                 strings.Repeat("x", 10*maxSmallFile),
	}
	for n, v := range files {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(v), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	got := vulnerabilities(dir)
	if got["meltdown"] != "Mitigation: PTI" || got["spec_rstack_overflow"] != "Vulnerable: No microcode" {
		t.Errorf("got %q", got)
	}
	if len(got["huge"]) != maxSmallFile {
		t.Errorf("a huge file gave %d bytes, want %d (the limit)", len(got["huge"]), maxSmallFile)
	}
	if vulnerabilities(filepath.Join(dir, "absent")) != nil {
		t.Error("an absent directory: want nil")
	}
}

func TestCheckHostLabel(t *testing.T) {
	for label, ok := range map[string]bool{
		"lab-a": true, "EPYC 7B13 (us-east1)": true, "<b>*x*</b>|": true,
		"": false, "  ": false, "a\nb": false, "a\x1b[31m": false, strings.Repeat("h", 65): false, "\xff": false,
	} {
		if err := CheckHostLabel(label); (err == nil) != ok {
			t.Errorf("CheckHostLabel(%q) = %v, want ok=%v", label, err, ok)
		}
	}
}
