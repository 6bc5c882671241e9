package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
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
	plots  []string
	detail string
}

func (o *outputOptions) bind(f *pflag.FlagSet) {
	o.flags = f
	f.StringVar(&o.format, "format", "markdown", "format on stdout (or of an --out FILE without extension): "+strings.Join(reports.Formats, ", "))
	f.StringArrayVarP(&o.outs, "out", "o", nil, "write a report to FILE instead of stdout (a file is replaced whole, a FIFO or device written through); repeatable; "+
		"the format comes from FILE:FORMAT, else --format if given, else the extension ("+reports.ExtensionList()+"); DIR:hgrm writes HdrHistogram percentile files")
	f.StringVar(&o.detail, "detail", "full", "Markdown detail: full (headline table, then every target's details) or summary (the headline only)")
	f.StringArrayVar(&o.plots, "plot", nil, "also draw a picture: "+reports.PlotSyntax+"; repeatable; Markdown reports link the speedups")
}

// destination is one checked output: a format and where it goes.
type destination struct {
	reports.Output
	file outFile // unused when Path is "" (stdout)
}

// resolve validates the flags and every path, before anything runs, and
// returns the destinations and the pictures' (nil without --plot); with no
// --out, one destination on stdout in --format.
func (o *outputOptions) resolve() ([]destination, *plotSet, error) {
	if err := oneOf("format", o.format, reports.Formats...); err != nil {
		return nil, nil, err
	}
	if err := oneOf("detail", o.detail, "full", "summary"); err != nil {
		return nil, nil, err
	}
	if o.format == "hgrm" && len(o.outs) == 0 {
		return nil, nil, usagef("--format hgrm writes one file per target and transport, not one stream: give a directory, --out DIR:hgrm")
	}
	seen := map[string]string{} // real path -> the flag that named it
	claim := func(flag string, f outFile) error {
		key := f.path
		if f.how == writeStdout || f.how == writeStderr {
			key = fmt.Sprint("stream ", f.how)
		}
		if other, dup := seen[key]; dup {
			return usagef("%s %q names the same file as %s; give each output its own file", flag, f.name, other)
		}
		seen[key] = fmt.Sprintf("%s %q", flag, f.name)
		return nil
	}
	plot, err := o.resolvePlots(claim)
	if err != nil {
		return nil, nil, err
	}
	if len(o.outs) == 0 {
		return []destination{{Output: reports.Output{Format: o.markdown(o.format)}}}, plot, nil
	}
	var outs []destination
	for _, spec := range o.outs {
		out, err := reports.ParseOutput(spec)
		explicit := err == nil && out.Path != spec // FILE:FORMAT
		if !explicit && o.flags != nil && o.flags.Changed("format") {
			out, err = reports.Output{Path: spec, Format: o.format}, nil
		}
		if err != nil {
			return nil, nil, usagef("--out: %v", err)
		}
		check := checkOutFile
		if out.Format == "hgrm" {
			check = checkOutDir
		}
		f, err := check("--out", out.Path)
		if err != nil {
			return nil, nil, err
		}
		if err := claim("--out", f); err != nil {
			return nil, nil, err
		}
		out.Format = o.markdown(out.Format)
		outs = append(outs, destination{Output: out, file: f})
	}
	return outs, plot, nil
}

// writeOutputs draws the plot, if asked, then renders rep into every
// output. A file names the plot relative to its own directory, so that
// Markdown links work and "dbsock report r.json" reproduces r.md beside it.
// One output that fails does not keep the others from being written; the
// errors are joined.
func writeOutputs(ctx context.Context, rep *results.Report, outs []destination, plot *plotSet, stdout, stderr io.Writer) error {
	var errs []error
	unwritten := false // an output could not be written (not rendered)
	// FIFOs and devices last: one that waits for its reader must not keep
	// the files from being written.
	outs = slices.Clone(outs)
	slices.SortStableFunc(outs, func(a, b destination) int { return throughLast(a) - throughLast(b) })
	if plot != nil {
		errs = append(errs, plot.draw(ctx, rep, stdout, stderr)...)
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
		if out.Format == "hgrm" {
			if err := writeHgrm(r, out.file); err != nil {
				errs, unwritten = append(errs, err), true
			}
			continue
		}
		var buf bytes.Buffer
		if err := reports.WriteContext(ctx, &buf, out.Format, r); err != nil {
			errs = append(errs, err)
			continue
		}
		if out.Path == "" {
			if _, err := stdout.Write(buf.Bytes()); err != nil {
				errs, unwritten = append(errs, fmt.Errorf("write report to stdout: %w", err)), true
			}
			continue
		}
		if err := out.file.write(ctx, buf.Bytes(), stdout, stderr); err != nil {
			errs, unwritten = append(errs, err), true
		}
	}
	if unwritten && !interrupted(ctx) {
		errs = append(errs, keepJSON(rep))
	}
	return errors.Join(errs...)
}

// runKey holds a run's own context in the context its report is rendered
// with (renderContext).
type runKey struct{}

// renderContext is the context an interrupted run's partial report is
// rendered with: the Ctrl-C that ended the run does not cut the report
// short (a second one exits: secondSignal), and interrupted still reads
// the run's own.
func renderContext(run context.Context) context.Context {
	return context.WithValue(context.WithoutCancel(run), runKey{}, run)
}

// interrupted says whether the command was interrupted: the run's own
// context where ctx is a renderContext, else ctx. An interrupted command
// whose output failed (its reader went away) keeps no copy of the report.
func interrupted(ctx context.Context) bool {
	if run, ok := ctx.Value(runKey{}).(context.Context); ok {
		return run.Err() != nil
	}
	return ctx.Err() != nil
}

// keepJSON saves the report's JSON where it is likely to fit when an
// output failed (a full filesystem, a device that refuses it), so that the
// measurements are not lost: a private file in the temp dir, else in
// /dev/shm, else in the home directory. It says where, or why nowhere.
func keepJSON(rep *results.Report) error {
	var buf bytes.Buffer
	if err := rep.WriteJSON(&buf); err != nil {
		return fmt.Errorf("the report could not be kept either: %w", err)
	}
	dirs := []string{os.TempDir(), "/dev/shm"}
	if home, err := os.UserHomeDir(); err == nil {
		dirs = append(dirs, home)
	}
	var tried []string
	for _, dir := range dirs {
		f, err := os.CreateTemp(dir, "dbsock-report-*.json") // mode 0600
		if err != nil {
			tried = append(tried, err.Error())
			continue
		}
		_, err = f.Write(buf.Bytes())
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(f.Name())
			tried = append(tried, fmt.Sprintf("%s: %v", f.Name(), err))
			continue
		}
		return fmt.Errorf("the report's JSON is kept in %s: render it again with: dbsock report %s --out FILE", f.Name(), f.Name())
	}
	return fmt.Errorf("the report could not be kept anywhere either (%s)", strings.Join(tried, "; "))
}

// throughLast orders written-through outputs (FIFOs, devices) last.
func throughLast(d destination) int {
	if d.Path != "" && d.file.how == writeThrough {
		return 1
	}
	return 0
}

// markdown applies --detail to a Markdown output's format.
func (o *outputOptions) markdown(format string) string {
	if o.detail == "summary" && (format == "markdown" || format == "md") {
		return "summary"
	}
	return format
}

// writeHgrm writes one .hgrm file per case and transport into dir.
func writeHgrm(r *results.Report, dir outFile) error {
	files, err := reports.Hgrm(r)
	if err != nil {
		return fmt.Errorf("write %s: %w", dir.name, err)
	}
	if err := os.MkdirAll(dir.path, 0o755); err != nil {
		return fmt.Errorf("write %s: %w", dir.name, err)
	}
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(files)) {
		if err := replaceFile(filepath.Join(dir.path, name), files[name]); err != nil {
			errs = append(errs, fmt.Errorf("write %s: %w", filepath.Join(dir.name, name), err))
		}
	}
	return errors.Join(errs...)
}
