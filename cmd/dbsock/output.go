package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"github.com/dbsock/dbsock/reports"
	"github.com/dbsock/dbsock/results"
)

// outputOptions are the flags that say where reports go.
type outputOptions struct {
	flags  *pflag.FlagSet
	format string
	outs   []string
	plot   string
}

func (o *outputOptions) bind(f *pflag.FlagSet) {
	o.flags = f
	f.StringVar(&o.format, "format", "markdown", "format on stdout (or of an --out FILE without extension): "+strings.Join(reports.Formats, ", "))
	f.StringArrayVarP(&o.outs, "out", "o", nil, "write a report to FILE instead of stdout, replaced whole; repeatable; "+
		"the format comes from FILE:FORMAT, else --format if given, else the extension (.md .json .csv .bench)")
	f.StringVar(&o.plot, "plot", "", "also draw latency by percentile and the speedup into this .svg or .png; Markdown reports link it")
}

// resolve validates the flags and returns the outputs; with no --out, one
// output to stdout in --format.
func (o *outputOptions) resolve() ([]reports.Output, error) {
	if err := oneOf("format", o.format, reports.Formats...); err != nil {
		return nil, err
	}
	if o.plot != "" {
		if err := reports.CheckPlotPath(o.plot); err != nil {
			return nil, usagef("--plot: %v", err)
		}
		if dir := filepath.Dir(o.plot); !isDir(dir) {
			return nil, usagef("--plot %q: directory %q does not exist; create it first", o.plot, dir)
		}
	}
	if len(o.outs) == 0 {
		return []reports.Output{{Format: o.format}}, nil
	}
	var outs []reports.Output
	seen := map[string]bool{}
	for _, spec := range o.outs {
		out, err := reports.ParseOutput(spec)
		explicit := err == nil && out.Path != spec // FILE:FORMAT
		if !explicit && o.flags != nil && o.flags.Changed("format") {
			out, err = reports.Output{Path: spec, Format: o.format}, nil
		}
		if err != nil {
			return nil, usagef("--out: %v", err)
		}
		if dir := filepath.Dir(out.Path); !isDir(dir) {
			return nil, usagef("--out %q: directory %q does not exist; create it first", spec, dir)
		}
		if seen[out.Path] {
			return nil, usagef("--out %q: the same file is named twice", out.Path)
		}
		seen[out.Path] = true
		outs = append(outs, out)
	}
	return outs, nil
}

func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

// writeOutputs draws the plot, if asked, then renders rep into every output.
// A file names the plot relative to its own directory, so that Markdown
// links work and "dbsock report r.json" reproduces r.md beside it.
func writeOutputs(rep *results.Report, outs []reports.Output, plotPath string, stdout io.Writer) error {
	if plotPath != "" {
		if err := reports.PlotFile(plotPath, rep); err != nil {
			return err
		}
		rep.Plot = plotPath
	}
	for _, out := range outs {
		r := rep
		if rep.Plot != "" && out.Path != "" {
			if rel, err := filepath.Rel(filepath.Dir(out.Path), rep.Plot); err == nil {
				copy := *rep
				copy.Plot = rel
				r = &copy
			}
		}
		var buf bytes.Buffer
		if err := reports.Write(&buf, out.Format, r); err != nil {
			return err
		}
		if out.Path == "" {
			if _, err := stdout.Write(buf.Bytes()); err != nil {
				return err
			}
			continue
		}
		if err := writeFileAtomic(out.Path, buf.Bytes()); err != nil {
			return err
		}
	}
	return nil
}

// writeFileAtomic writes data to a temp file next to path and renames it
// into place, so that path is never left truncated.
func writeFileAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("write report %s: %w", path, err)
	}
	tmp := f.Name()
	_, werr := f.Write(data)
	cerr := f.Close()
	if err := firstErr(werr, cerr, os.Chmod(tmp, 0o644)); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write report %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write report %s: %w", path, err)
	}
	return nil
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}
