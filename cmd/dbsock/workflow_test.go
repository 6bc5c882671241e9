package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/dbsock/dbsock/internal/testutil"
)

// workflow is the part of a GitHub Actions workflow the job runner below
// reads.
type workflow struct {
	Jobs map[string]struct {
		Env   map[string]string `yaml:"env"`
		Steps []step            `yaml:"steps"`
	} `yaml:"jobs"`
}

type step struct {
	Name string            `yaml:"name"`
	Uses string            `yaml:"uses"`
	If   string            `yaml:"if"`
	Run  string            `yaml:"run"`
	With map[string]string `yaml:"with"`
}

// job runs a workflow's one job as GitHub's runner would, in repo: each
// run step under bash -eo pipefail with the job's environment; the actions
// it uses stood in for (setup-go: Go is here; the cache: a directory;
// upload-artifact: a copy); "if:" as GitHub reads it (a step without
// always() runs only while the job succeeds).
type job struct {
	t                          *testing.T
	repo, cache, artifacts     string
	summary                    string
	env                        []string
	overrides                  map[string]string
	ref                        string
	failedStep                 string
	failedStatus, stepsRun     int
	output                     strings.Builder
	stepsSkipped, stepsEmulate []string
}

func (j *job) run(w workflow) {
	j.t.Helper()
	if len(w.Jobs) != 1 {
		j.t.Fatalf("%d jobs, want 1", len(w.Jobs))
	}
	for _, jb := range w.Jobs {
		env := map[string]string{}
		for k, v := range jb.Env {
			env[k] = v
		}
		for k, v := range j.overrides {
			env[k] = v
		}
		j.env = append(slices.Clone(j.env), "GITHUB_STEP_SUMMARY="+j.summary, "GITHUB_REF="+j.ref, "GITHUB_WORKSPACE="+j.repo, "CI=true")
		for k, v := range env {
			j.env = append(j.env, k+"="+v)
		}
		for _, s := range jb.Steps {
			j.step(s)
		}
	}
}

// runs says whether s runs now, by its if: condition.
func (j *job) runs(s step) bool {
	cond := strings.TrimSpace(strings.Trim(strings.TrimSpace(s.If), "${}"))
	switch cond {
	case "":
		return j.failedStep == ""
	case "always()":
		return true
	case "github.ref == 'refs/heads/main'":
		return j.failedStep == "" && j.ref == "refs/heads/main"
	}
	j.t.Fatalf("step %q: the runner here does not read if: %q", s.Name, s.If)
	return false
}

func (j *job) step(s step) {
	j.t.Helper()
	if !j.runs(s) {
		j.stepsSkipped = append(j.stepsSkipped, s.Name+s.Uses)
		return
	}
	if s.Uses != "" {
		j.emulate(s)
		return
	}
	j.stepsRun++
	cmd := exec.Command("bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", s.Run)
	cmd.Dir, cmd.Env = j.repo, j.env
	out, err := cmd.CombinedOutput()
	fmt.Fprintf(&j.output, "== %s\n%s", s.Name, out)
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		if j.failedStep == "" {
			j.failedStep, j.failedStatus = s.Name, ee.ExitCode()
		}
	case err != nil:
		j.t.Fatalf("step %q: %v", s.Name, err)
	}
}

// emulate stands in for the actions the workflow uses; any other fails
// the test, so that what runs here is what the workflow asks for.
func (j *job) emulate(s step) {
	j.t.Helper()
	action, _, _ := strings.Cut(s.Uses, "@")
	j.stepsEmulate = append(j.stepsEmulate, action)
	switch action {
	case "actions/setup-go":
		if _, err := exec.LookPath("go"); err != nil {
			j.t.Fatal("setup-go: no go here")
		}
	case "actions/cache/restore":
		if b, err := os.ReadFile(filepath.Join(j.cache, s.With["path"])); err == nil {
			j.write(filepath.Join(j.repo, s.With["path"]), b)
		}
	case "actions/cache/save":
		b, err := os.ReadFile(filepath.Join(j.repo, s.With["path"]))
		if err != nil {
			j.fail(s, 1)
			return
		}
		j.write(filepath.Join(j.cache, s.With["path"]), b)
	case "actions/upload-artifact":
		j.upload(s)
	case "actions/download-artifact":
		j.download(s)
	default:
		j.t.Fatalf("step %q uses %s, which the runner here does not stand in for", s.Name, s.Uses)
	}
}

// upload copies the step's path (a directory, or files a line each) into
// the artifact of its name.
func (j *job) upload(s step) {
	dst := filepath.Join(j.artifacts, s.With["name"])
	paths := strings.Fields(s.With["path"])
	if len(paths) == 1 {
		if err := exec.Command("cp", "-r", filepath.Join(j.repo, paths[0]), dst).Run(); err != nil {
			j.fail(s, 1) // GitHub warns of a missing path; a failed copy here is a failed step
		}
		return
	}
	os.MkdirAll(dst, 0o755)
	for _, p := range paths {
		if err := exec.Command("cp", "-r", filepath.Join(j.repo, p), dst).Run(); err != nil {
			j.fail(s, 1)
		}
	}
}

// download copies every artifact whose name matches the step's pattern
// into its path, merged into one directory (merge-multiple: true, the
// only way the workflows here download).
func (j *job) download(s step) {
	j.t.Helper()
	if s.With["merge-multiple"] != "true" {
		j.t.Fatalf("step %q: the runner here downloads with merge-multiple: true only", s.Name)
	}
	arts, _ := filepath.Glob(filepath.Join(j.artifacts, s.With["pattern"]))
	dst := filepath.Join(j.repo, s.With["path"])
	os.MkdirAll(dst, 0o755)
	for _, a := range arts {
		if err := exec.Command("cp", "-r", a+"/.", dst).Run(); err != nil {
			j.fail(s, 1)
		}
	}
	if len(arts) == 0 {
		j.fail(s, 1) // no artifact matches: the action fails
	}
}

func (j *job) fail(s step, status int) {
	if j.failedStep == "" {
		j.failedStep, j.failedStatus = s.Name+s.Uses, status
	}
}

func (j *job) write(path string, b []byte) {
	j.t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		j.t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		j.t.Fatal(err)
	}
}

// TestGitHubWorkflowInAUsersRepository copies examples/github-workflow.yml
// into an empty repository layout and runs its job's steps here, as
// GitHub's runner would, three times: on main without a baseline (it
// measures, writes the job summary and saves the baseline), on a branch
// (it also compares, and the comparison reaches the summary and the
// artifact), and with a threshold that cannot hold (the job fails with 3,
// and the summary still has the report and the comparison). dbsock is
// installed by the workflow's own go install, from a module proxy that
// serves this checkout's HEAD commit (scripts/modproxy), as a release
// would be. The regression bound is 10,000% and the least speedup 0: this
// checks the job's steps and statuses, not the machine's steadiness.
func TestGitHubWorkflowInAUsersRepository(t *testing.T) {
	testutil.NeedAny(t, "redis-server")
	testutil.NeedAny(t, "initdb")
	raw, err := os.ReadFile("../../examples/github-workflow.yml")
	if err != nil {
		t.Fatal(err)
	}
	var w workflow
	if err := yaml.Unmarshal(raw, &w); err != nil {
		t.Fatalf("the workflow is not YAML: %v", err)
	}
	dir := t.TempDir()
	env := installEnv(t, dir)

	cache := filepath.Join(dir, "cache")
	newJob := func(name, ref string, overrides map[string]string) *job {
		repo := filepath.Join(dir, name, "repo")
		j := &job{t: t, repo: repo, cache: cache, artifacts: filepath.Join(dir, name, "artifacts"),
			summary: filepath.Join(dir, name, "summary.md"), env: env, ref: ref, overrides: overrides}
		j.write(filepath.Join(repo, ".github", "workflows", "dbsock.yml"), raw)
		os.MkdirAll(j.artifacts, 0o755)
		j.run(w)
		t.Logf("%s: steps run %d, emulated %v, skipped %v, failed %q (%d)", name, j.stepsRun, j.stepsEmulate, j.stepsSkipped, j.failedStep, j.failedStatus)
		return j
	}
	read := func(path string) string {
		b, _ := os.ReadFile(path)
		return string(b)
	}
	small := map[string]string{"DBSOCK_RUN_FLAGS": "--n 400 --instances 6", "BOUND": "10000%", "MIN_SPEEDUP": "0"}

	main := newJob("main", "refs/heads/main", small)
	if main.failedStep != "" {
		t.Fatalf("on main: step %q exited %d\n%s", main.failedStep, main.failedStatus, main.output.String())
	}
	sum := read(main.summary)
	for _, want := range []string{"Unix domain socket vs TCP", "| redis: pk (resp3), 6 B values, placed shared |", "| postgres: pk (prepared), 6 B values, placed split |", "No baseline yet"} {
		if !strings.Contains(sum, want) {
			t.Errorf("main's job summary lacks %q:\n%s", want, sum)
		}
	}
	if read(filepath.Join(cache, "baseline.json")) == "" {
		t.Fatal("main saved no baseline")
	}

	branch := newJob("branch", "refs/heads/feature", small)
	if branch.failedStep != "" {
		t.Fatalf("on a branch: step %q exited %d\n%s", branch.failedStep, branch.failedStatus, branch.output.String())
	}
	sum = read(branch.summary)
	if !strings.Contains(sum, "## Against the baseline") || !strings.Contains(sum, "Unix domain socket vs TCP") {
		t.Errorf("the branch's job summary lacks the report or the comparison:\n%s", sum)
	}
	art := filepath.Join(branch.artifacts, "dbsock-report")
	for _, f := range []string{"results.json", "report.html", "report.md", "compare.md"} {
		if read(filepath.Join(art, f)) == "" {
			t.Errorf("the artifact has no %s", f)
		}
	}
	if cmp := read(filepath.Join(art, "compare.md")); !strings.Contains(cmp, "| redis |") {
		t.Errorf("compare.md has no redis row:\n%s", cmp)
	}
	if slices.Contains(branch.stepsEmulate, "actions/cache/save") {
		t.Error("a branch saved the baseline")
	}

	strict := map[string]string{"DBSOCK_RUN_FLAGS": small["DBSOCK_RUN_FLAGS"] + " --threshold redis.unix.p50<1ns", "BOUND": "10000%", "MIN_SPEEDUP": "0"}
	failed := newJob("threshold", "refs/heads/feature", strict)
	if failed.failedStatus != ExitThreshold {
		t.Fatalf("a threshold that cannot hold: step %q exited %d, want %d\n%s", failed.failedStep, failed.failedStatus, ExitThreshold, failed.output.String())
	}
	sum = read(failed.summary)
	if !strings.Contains(sum, "Unix domain socket vs TCP") || !strings.Contains(sum, "## Against the baseline") {
		t.Errorf("a failed gate's summary lacks the report or the comparison:\n%s", sum)
	}
}

// installEnv is the environment the workflow's steps run in here: its
// go install gets dbsock from a module proxy in dir that serves this
// checkout's HEAD commit (scripts/modproxy), into dir/gobin on the PATH;
// where this root has no sudo, a stand-in runs the command itself.
func installEnv(t *testing.T, dir string) []string {
	t.Helper()
	proxy := filepath.Join(dir, "proxy")
	mp := exec.Command("go", "run", "./scripts/modproxy", proxy)
	mp.Dir = "../.."
	v, err := mp.Output()
	if err != nil {
		t.Fatalf("modproxy: %v", err)
	}
	goproxy, _ := exec.Command("go", "env", "GOPROXY").Output()
	shims := filepath.Join(dir, "shims")
	gobin := filepath.Join(dir, "gobin")
	if _, err := exec.LookPath("sudo"); err != nil {
		os.MkdirAll(shims, 0o755)
		os.WriteFile(filepath.Join(shims, "sudo"), []byte("#!/bin/sh\nexec env \"$@\"\n"), 0o755)
	}
	t.Logf("dbsock %s from %s", strings.TrimSpace(string(v)), proxy)
	return append(os.Environ(),
		"GOPROXY=file://"+proxy+","+strings.TrimSpace(string(goproxy)),
		"GONOSUMDB=github.com/dbsock/dbsock", "GOBIN="+gobin,
		"PATH="+gobin+":"+shims+":"+os.Getenv("PATH"))
}
