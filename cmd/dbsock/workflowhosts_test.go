package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/dbsock/dbsock/internal/testutil"
)

// hostsWorkflow is the part of a workflow with a matrix job and a job
// that needs it that the runner below reads.
type hostsWorkflow struct {
	Env  map[string]string `yaml:"env"`
	Jobs map[string]struct {
		Needs    string `yaml:"needs"`
		Strategy struct {
			Matrix struct {
				Runner []string `yaml:"runner"`
			} `yaml:"matrix"`
		} `yaml:"strategy"`
		Env   map[string]string `yaml:"env"`
		Steps []step            `yaml:"steps"`
	} `yaml:"jobs"`
}

// TestGitHubHostsWorkflowInAUsersRepository runs
// examples/github-hosts-workflow.yml's jobs here as GitHub's runner would:
// the measure job once per runner of its matrix (each in a repository of
// its own, its file kept as an artifact named after the runner), then the
// report job that needs them, which downloads every runner's file into
// one directory and writes one table of them. Both runners are this
// machine: the test checks the jobs, the artifacts and the table, not two
// kinds of hardware.
func TestGitHubHostsWorkflowInAUsersRepository(t *testing.T) {
	testutil.NeedAny(t, "redis-server")
	raw, err := os.ReadFile("../../examples/github-hosts-workflow.yml")
	if err != nil {
		t.Fatal(err)
	}
	var w hostsWorkflow
	if err := yaml.Unmarshal(raw, &w); err != nil {
		t.Fatalf("the workflow is not YAML: %v", err)
	}
	measure, report := w.Jobs["measure"], w.Jobs["report"]
	if len(measure.Strategy.Matrix.Runner) < 2 || report.Needs != "measure" || len(w.Jobs) != 2 {
		t.Fatalf("want a measure job over two runners or more and a report job that needs it; got %+v", w.Jobs)
	}
	dir := t.TempDir()
	env := installEnv(t, dir)
	artifacts := filepath.Join(dir, "artifacts")
	os.MkdirAll(artifacts, 0o755)
	run := func(name string, jobEnv map[string]string, steps []step, runner string) *job {
		repo := filepath.Join(dir, name, "repo")
		j := &job{t: t, repo: repo, artifacts: artifacts, summary: filepath.Join(dir, name, "summary.md"), ref: "refs/heads/main"}
		os.MkdirAll(repo, 0o755)
		j.env = append(slices.Clone(env), "GITHUB_STEP_SUMMARY="+j.summary, "GITHUB_WORKSPACE="+repo, "CI=true")
		vars := map[string]string{}
		for _, m := range []map[string]string{w.Env, jobEnv, {"DBSOCK_RUN_FLAGS": "--n 300 --instances 1 --rounds 2"}} {
			for k, v := range m {
				vars[k] = matrixValue(v, runner)
			}
		}
		for k, v := range vars {
			j.env = append(j.env, k+"="+v)
		}
		for _, s := range steps {
			for k, v := range s.With {
				s.With[k] = matrixValue(v, runner)
			}
			j.step(s)
		}
		if j.failedStep != "" {
			t.Fatalf("%s: step %q exited %d\n%s", name, j.failedStep, j.failedStatus, j.output.String())
		}
		return j
	}
	for _, r := range measure.Strategy.Matrix.Runner {
		run("measure-"+r, measure.Env, cloneSteps(measure.Steps), r)
	}
	j := run("report", report.Env, cloneSteps(report.Steps), "")
	sum, _ := os.ReadFile(j.summary)
	header := "| target | case | paths | " + strings.Join(measure.Strategy.Matrix.Runner, " | ") + " |"
	for _, want := range []string{header, "| redis | pk (resp3), 6 B values, placed shared | Unix vs TCP | ", "| redis | pk (resp3), 6 B values, placed split | Unix vs TCP | ", "## Hosts", "(hosts.png)"} {
		if !strings.Contains(string(sum), want) {
			t.Errorf("the job summary lacks %q:\n%s", want, sum)
		}
	}
	for _, f := range []string{"hosts.md", "hosts.csv", "hosts.png"} {
		if st, err := os.Stat(filepath.Join(artifacts, "dbsock-hosts", f)); err != nil || st.Size() == 0 {
			t.Errorf("the table's artifact has no %s: %v", f, err)
		}
	}
}

// matrixValue is v with the matrix's runner put for ${{ matrix.runner }}.
func matrixValue(v, runner string) string {
	return strings.ReplaceAll(v, "${{ matrix.runner }}", runner)
}

// cloneSteps copies steps, each with its own with: map.
func cloneSteps(steps []step) []step {
	out := slices.Clone(steps)
	for i := range out {
		with := map[string]string{}
		for k, v := range out[i].With {
			with[k] = v
		}
		out[i].With = with
	}
	return out
}
