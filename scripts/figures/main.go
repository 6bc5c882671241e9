// Command figures measures again every figure README.md and docs/ print
// from a run, and writes each one in place, beside the command that made
// it. It is run by hand, alone on the machine, as scripts/stability.sh is:
//
//	go run ./scripts/figures              # every figure
//	go run ./scripts/figures -only tcp6   # the figures whose command contains "tcp6"
//
// A figure is a block in a Markdown file:
//
//	<!-- figure KIND: COMMAND -->
//	...what the last run wrote...
//	<!-- /figure -->
//
// COMMAND is a dbsock command line ("dbsock run ..."), run with the
// dbsock built from this checkout, or for KIND sh a shell command whose
// output is shown as it is. KIND says what of a dbsock run's report is
// shown: headline (the headline table and its method), full (the whole
// Markdown report) or explain (the "Where the microseconds go" table).
// Blocks with the same COMMAND show one run.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/dbsock/dbsock/internal/docs"
)

func main() {
	only := flag.String("only", "", "measure only the figures whose command contains this text")
	flag.Parse()
	if err := run(*only); err != nil {
		fmt.Fprintln(os.Stderr, "figures:", err)
		os.Exit(1)
	}
}

func run(only string) error {
	files, err := filepath.Glob("docs/*.md")
	if err != nil {
		return err
	}
	files = append([]string{"README.md"}, files...)
	bin, err := build()
	if err != nil {
		return err
	}
	defer os.RemoveAll(filepath.Dir(bin))
	m := &measurer{bin: bin, reports: map[string]string{}}
	for _, f := range files {
		old, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		text, err := docs.Rewrite(string(old), func(fig docs.Figure) (string, error) {
			if only != "" && !strings.Contains(fig.Command, only) {
				return fig.Body, nil
			}
			fmt.Fprintf(os.Stderr, "figures: %s: %s\n", f, fig.Command)
			return m.render(fig)
		})
		if err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		if text != string(old) {
			if err := os.WriteFile(f, []byte(text), 0o644); err != nil {
				return err
			}
		}
	}
	return nil
}

// build compiles this checkout's dbsock into a temporary directory.
func build() (string, error) {
	dir, err := os.MkdirTemp("", "dbsock-figures-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "dbsock")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/dbsock")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("building dbsock: %w", err)
	}
	return bin, nil
}

type measurer struct {
	bin     string
	reports map[string]string // a dbsock command's JSON report file
}

func (m *measurer) render(fig docs.Figure) (string, error) {
	if fig.Kind == "sh" {
		out, err := exec.Command("bash", "-o", "pipefail", "-c", fig.Command).Output()
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("`%s` on %s:\n\n```text\n%s```\n", fig.Command, time.Now().UTC().Format("2006-01-02"), out), nil
	}
	args, ok := strings.CutPrefix(fig.Command, "dbsock ")
	if !ok {
		return "", errors.New(`a figure of a run starts "dbsock "`)
	}
	js, err := m.measure(fig.Command, args)
	if err != nil {
		return "", err
	}
	var detail []string
	switch fig.Kind {
	case "headline":
		detail = []string{"--detail", "summary"}
	}
	var md bytes.Buffer
	rep := exec.Command(m.bin, append([]string{"report", js}, detail...)...)
	rep.Stdout, rep.Stderr = &md, os.Stderr
	if err := rep.Run(); err != nil {
		return "", fmt.Errorf("dbsock report: %w", err)
	}
	head, err := caption(fig.Command, js)
	if err != nil {
		return "", err
	}
	switch fig.Kind {
	case "full":
		return md.String(), nil
	case "explain":
		table, err := docs.Section(md.String(), "Where the microseconds go")
		if err != nil {
			return "", err
		}
		return head + "\n" + table, nil
	}
	return head + "\n" + docs.Demote(md.String()), nil
}

// measure runs a dbsock command once per invocation and returns its JSON
// report's file.
func (m *measurer) measure(command, args string) (string, error) {
	if js, ok := m.reports[command]; ok {
		return js, nil
	}
	js := filepath.Join(filepath.Dir(m.bin), fmt.Sprintf("figure-%d.json", len(m.reports)))
	words, err := docs.Split(args)
	if err != nil {
		return "", err
	}
	cmd := exec.Command(m.bin, append(words, "--quiet", "--out", js)...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%s: %w", command, err)
	}
	m.reports[command] = js
	return js, nil
}

// caption is the line above a figure: the command, when and where it ran.
func caption(command, js string) (string, error) {
	b, err := os.ReadFile(js)
	if err != nil {
		return "", err
	}
	var r struct {
		StartedAt   time.Time `json:"started_at"`
		FinishedAt  time.Time `json:"finished_at"`
		Environment struct {
			CPUModel       string `json:"cpu_model"`
			NumCPU         int    `json:"num_cpu"`
			Virtualization string `json:"virtualization"`
		} `json:"environment"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return "", fmt.Errorf("reading %s: %w", js, err)
	}
	took := r.FinishedAt.Sub(r.StartedAt).Round(time.Second)
	return fmt.Sprintf("`%s` on %s (%s, %d logical CPUs; %s), as dbsock wrote it:\n",
		command, r.StartedAt.Format("2006-01-02"), r.Environment.CPUModel, r.Environment.NumCPU, took), nil
}
