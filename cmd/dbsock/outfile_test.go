package main

import (
	"bytes"
	"context"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Every kind of path a report can be given, made in a temp dir: never the
// machine's real device files (as root, a failing test would replace them).

func TestOutFileRegularFileReplacedKeepingItsMode(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.json")
	if err := os.WriteFile(path, []byte(strings.Repeat("old\n", 100)), 0o600); err != nil {
		t.Fatal(err)
	}
	writeChecked(t, path, "new\n")
	if b, _ := os.ReadFile(path); string(b) != "new\n" {
		t.Fatalf("file holds %q", b)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, want 0600 kept", fi.Mode().Perm())
	}
}

func TestOutFileSymlinkWrittenThroughToItsTarget(t *testing.T) {
	dir := t.TempDir()
	target, link := filepath.Join(dir, "real.md"), filepath.Join(dir, "link.md")
	if err := os.WriteFile(target, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("real.md", link); err != nil {
		t.Fatal(err)
	}
	writeChecked(t, link, "new")
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Fatalf("the symlink was replaced: %v %v", fi.Mode(), err)
	}
	if b, _ := os.ReadFile(target); string(b) != "new" {
		t.Fatalf("target holds %q", b)
	}
	// A dangling link: the file it names is created.
	dangling := filepath.Join(dir, "dangling.md")
	if err := os.Symlink("later.md", dangling); err != nil {
		t.Fatal(err)
	}
	writeChecked(t, dangling, "made")
	if b, _ := os.ReadFile(filepath.Join(dir, "later.md")); string(b) != "made" {
		t.Fatalf("dangling link's target holds %q", b)
	}
}

func TestOutFileFIFOWrittenThrough(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "pipe")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 1)
	go func() {
		b, _ := os.ReadFile(fifo)
		got <- string(b)
	}()
	writeChecked(t, fifo, "through the pipe")
	if s := <-got; s != "through the pipe" {
		t.Fatalf("reader got %q", s)
	}
	if fi, _ := os.Lstat(fifo); fi.Mode()&fs.ModeNamedPipe == 0 {
		t.Fatalf("the FIFO was replaced by %v", fi.Mode())
	}
}

func TestOutFileDeviceWrittenThroughNeverReplaced(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("making a device node needs root")
	}
	full := filepath.Join(t.TempDir(), "full") // a private node like /dev/full
	if err := unix.Mknod(full, unix.S_IFCHR|0o666, int(unix.Mkdev(1, 7))); err != nil {
		t.Skip("mknod:", err)
	}
	f, err := checkOutFile("--out", full)
	if err != nil || f.how != writeThrough {
		t.Fatalf("check: %+v, %v; want written through", f, err)
	}
	err = f.write(context.Background(), []byte("x"), nil, nil)
	if err == nil || !strings.Contains(err.Error(), "no space left") {
		t.Fatalf("write to a full device: %v, want ENOSPC", err)
	}
	if fi, _ := os.Lstat(full); fi.Mode()&fs.ModeCharDevice == 0 {
		t.Fatalf("the device was replaced by %v", fi.Mode())
	}
}

func TestOutFileStdStreams(t *testing.T) {
	for path, want := range map[string]int{"/dev/stdout": writeStdout, "/proc/self/fd/1": writeStdout, "/dev/stderr": writeStderr} {
		f, err := checkOutFile("--out", path)
		if err != nil || f.how != want {
			t.Fatalf("%s: %+v, %v", path, f, err)
		}
		var out, errb bytes.Buffer
		if err := f.write(context.Background(), []byte("hi"), &out, &errb); err != nil {
			t.Fatal(err)
		}
		if (want == writeStdout && out.String() != "hi") || (want == writeStderr && errb.String() != "hi") {
			t.Fatalf("%s: stdout %q stderr %q", path, out.String(), errb.String())
		}
	}
}

func TestOutFileRefusals(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "s.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	tests := []struct{ path, want string }{
		{dir, "is a directory"},
		{sock, "is a Unix socket"},
		{filepath.Join(dir, "missing", "r.json"), "does not exist; create it first"},
		{"/proc/dbsock-report.json", "cannot create files in"},
	}
	for _, tt := range tests {
		if _, err := checkOutFile("--out", tt.path); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want %q", tt.path, err, tt.want)
		}
	}
}

// writeChecked checks path as --out does, then writes data to it.
func writeChecked(t *testing.T, path, data string) {
	t.Helper()
	f, err := checkOutFile("--out", path)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.write(context.Background(), []byte(data), nil, nil); err != nil {
		t.Fatal(err)
	}
}

func TestOutputsCheckedBeforeTheRunAndOneFailureSparesTheOthers(t *testing.T) {
	dir := t.TempDir()
	chdir(t, dir)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--out", "x.json", "--out", "./x.json"}, "names the same file as --out \"x.json\""},
		{[]string{"--out", "same.svg:markdown", "--plot", "same.svg"}, "names the same file as --plot"},
		{[]string{"--out", "nodir/r.json"}, "does not exist"},
		{[]string{"--plot", dir}, "must end in .svg or .png"},
	} {
		code, _, errs := dbsock(t, append([]string{"run", "echo", "--n", "10", "--provider", "local"}, tt.args...)...)
		if code != ExitUsage || !strings.Contains(errs, tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 saying %q", tt.args, code, errs, tt.want)
		}
	}
	code, _, errs := dbsock(t, "run", "echo", "--n", "200", "--warmup", "10", "--instances", "1", "--rounds", "1", "--blocks", "2", "--provider", "local", "-q",
		"--out", "hist:hgrm", "--out", "r.json")
	if code != 0 {
		t.Fatalf("hgrm: exit %d, %s", code, errs)
	}
	for _, name := range []string{"echo-tcp.hgrm", "echo-unix.hgrm"} {
		if b, err := os.ReadFile(filepath.Join(dir, "hist", name)); err != nil || !strings.Contains(string(b), "Total count    =          200]") {
			t.Fatalf("%s: %v\n%s", name, err, b)
		}
	}
	if os.Geteuid() != 0 {
		return
	}
	full := filepath.Join(dir, "full")
	if err := unix.Mknod(full, syscall.S_IFCHR|0o666, int(unix.Mkdev(1, 7))); err != nil {
		t.Skip("mknod:", err)
	}
	t.Setenv("TMPDIR", dir) // where the report's JSON is kept when an output fails
	code, _, errs = dbsock(t, "run", "echo", "--n", "200", "--warmup", "10", "--instances", "1", "--rounds", "1", "--blocks", "2", "--provider", "local", "-q",
		"--out", "full:json", "--out", "good.json")
	if code != ExitFailed || !strings.Contains(errs, "write full") || !strings.Contains(errs, "the report's JSON is kept in "+dir) {
		t.Fatalf("exit %d, stderr %q; want 1, the failed write named, and the JSON kept in %s", code, errs, dir)
	}
	if rep, err := readReport(filepath.Join(dir, "good.json")); err != nil || len(rep.Runs) != 2 {
		t.Fatalf("the good output was not written: %v", err)
	}
}

func chdir(t *testing.T, dir string) {
	t.Helper()
	old, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chdir(old) })
}

// TestReportOfAFIFOCanBeInterrupted: reading a FIFO nobody writes to
// blocks in the kernel; an interrupt must still end dbsock report.
func TestReportOfAFIFOCanBeInterrupted(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "r.json")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { // let the blocked reader go
		if f, err := os.OpenFile(fifo, os.O_WRONLY|unix.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	var out, errb bytes.Buffer
	start := time.Now()
	code := Main(ctx, []string{"report", fifo}, &out, &errb)
	if code != ExitFailed || time.Since(start) > 2*time.Second || !strings.Contains(errb.String(), "interrupted while reading") {
		t.Fatalf("exit %d after %s, stderr %q; want 1 soon after the interrupt", code, time.Since(start), errb.String())
	}
}

// TestFIFOWithoutReaderGivesWay: an output FIFO nobody reads keeps neither
// the other outputs from being written nor dbsock from stopping at the
// first Ctrl-C.
func TestFIFOWithoutReaderGivesWay(t *testing.T) {
	dir := shortTempDir(t)
	rep := filepath.Join(dir, "r.json")
	if code, _, stderr := dbsock(t, "run", "echo", "--n", "100", "--warmup", "10", "--instances", "1", "--rounds", "1", "-q", "--out", rep); code != 0 {
		t.Fatalf("run: %s", stderr)
	}
	fifo, side := filepath.Join(dir, "out.fifo"), filepath.Join(dir, "side.md")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(500*time.Millisecond, cancel) // the first Ctrl-C
	var out, errb bytes.Buffer
	began := time.Now()
	code := Main(ctx, []string{"report", rep, "--out", fifo + ":json", "--out", side}, &out, &errb)
	if took := time.Since(began); took > 5*time.Second {
		t.Fatalf("report took %s after the interrupt", took)
	}
	if code == ExitOK || !strings.Contains(errb.String(), "no process reads the FIFO") {
		t.Fatalf("exit %d, stderr %q; want a failure naming the FIFO", code, errb.String())
	}
	if b, err := os.ReadFile(side); err != nil || !strings.Contains(string(b), "Unix domain socket vs TCP") {
		t.Fatalf("side.md was not written: %v", err)
	}
}

// TestFullDeviceKeepsTheJSON: an output that cannot be written (here
// /dev/full, which answers every write with "no space left on device")
// fails the command, the others are still written, and the report's JSON
// is kept in a private temp file that the error names.
func TestFullDeviceKeepsTheJSON(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip(err)
	}
	dir := shortTempDir(t)
	t.Setenv("TMPDIR", dir)
	rep := filepath.Join(dir, "r.json")
	if code, _, stderr := dbsock(t, "run", "echo", "--n", "100", "--warmup", "10", "--instances", "1", "--rounds", "1", "-q", "--out", rep); code != 0 {
		t.Fatalf("run: %s", stderr)
	}
	side := filepath.Join(dir, "side.md")
	var out, errb bytes.Buffer
	code := Main(context.Background(), []string{"report", rep, "--out", "/dev/full:json", "--out", side}, &out, &errb)
	if code != ExitFailed || !strings.Contains(errb.String(), "no space left on device") {
		t.Fatalf("exit %d, stderr %q; want a failure saying the device is full", code, errb.String())
	}
	if _, err := os.Stat(side); err != nil {
		t.Fatalf("side.md was not written: %v", err)
	}
	kept, _ := filepath.Glob(filepath.Join(dir, "dbsock-report-*.json"))
	if len(kept) != 1 || !strings.Contains(errb.String(), "the report's JSON is kept in "+kept[0]) {
		t.Fatalf("kept %v; stderr %q", kept, errb.String())
	}
	if code, _, stderr := dbsock(t, "report", kept[0]); code != 0 {
		t.Fatalf("the kept JSON does not read back: %s", stderr)
	}
}
