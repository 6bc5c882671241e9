package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"github.com/dbsock/dbsock/internal/report"
	"github.com/dbsock/dbsock/internal/results"
)

// outputOptions are the flags that say where reports go.
type outputOptions struct {
	flags  *pflag.FlagSet
	format string
	outs   []string
}

func (o *outputOptions) bind(f *pflag.FlagSet) {
	o.flags = f
	f.StringVar(&o.format, "format", "markdown", "format on stdout (or of an --out FILE without extension): "+strings.Join(report.Formats, ", "))
	f.StringArrayVarP(&o.outs, "out", "o", nil, "write a report to FILE instead of stdout, replaced whole; repeatable; "+
		"the format comes from FILE:FORMAT, else --format if given, else the extension (.md .json .csv .bench)")
}

// resolve validates the flags and returns the outputs; with no --out, one
// output to stdout in --format.
func (o *outputOptions) resolve() ([]report.Output, error) {
	if err := oneOf("format", o.format, report.Formats...); err != nil {
		return nil, err
	}
	if len(o.outs) == 0 {
		return []report.Output{{Format: o.format}}, nil
	}
	var outs []report.Output
	seen := map[string]bool{}
	for _, spec := range o.outs {
		out, err := report.ParseOutput(spec)
		explicit := err == nil && out.Path != spec // FILE:FORMAT
		if !explicit && o.flags != nil && o.flags.Changed("format") {
			out, err = report.Output{Path: spec, Format: o.format}, nil
		}
		if err != nil {
			return nil, usagef("--out: %v", err)
		}
		dir := filepath.Dir(out.Path)
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
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

// writeOutputs renders rep into every output.
func writeOutputs(rep *results.Report, outs []report.Output, stdout io.Writer) error {
	for _, out := range outs {
		var buf bytes.Buffer
		if err := report.Write(&buf, out.Format, rep); err != nil {
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
