package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/dbsock/dbsock/reports"
)

// dbsock report of several files: the result files of several hosts (and
// the .json files of directories) as one matrix, a column per host.

// maxHostFiles is the most result files one report sets side by side.
const maxHostFiles = 64

// resultFiles are the files args name: each file as it is, each
// directory's .json files in name order; a file named twice is refused.
func resultFiles(args []string) ([]string, error) {
	var files []string
	seen := map[string]string{} // absolute path -> as named
	for _, arg := range args {
		st, err := os.Stat(arg)
		if err != nil {
			return nil, usagef("read results %s: %v; give the files (or directories of them) that dbsock run --out FILE.json wrote", arg, err)
		}
		named := []string{arg}
		if st.IsDir() {
			if named, err = jsonFiles(arg); err != nil {
				return nil, err
			}
		}
		for _, f := range named {
			abs, _ := filepath.Abs(f)
			if other, dup := seen[abs]; dup {
				return nil, usagef("%s and %s are the same file; give each host's file once", other, f)
			}
			seen[abs] = f
			files = append(files, f)
		}
		if len(files) > maxHostFiles {
			return nil, usagef("more than %d result files: more than one report sets side by side; report fewer hosts at once", maxHostFiles)
		}
	}
	return files, nil
}

// jsonFiles are dir's .json files in name order (of its first 10,000
// entries).
func jsonFiles(dir string) ([]string, error) {
	d, err := os.Open(dir)
	if err != nil {
		return nil, usagef("read results in directory %s: %v", dir, err)
	}
	defer d.Close()
	entries, err := d.ReadDir(10000)
	if err != nil && len(entries) == 0 {
		return nil, usagef("read results in directory %s: %v", dir, err)
	}
	var files []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".json") && e.Type().IsRegular() {
			files = append(files, filepath.Join(dir, e.Name()))
		}
	}
	if len(files) == 0 {
		return nil, usagef("directory %s holds no .json file; give it the files dbsock run --out FILE.json wrote", dir)
	}
	slices.Sort(files)
	return files, nil
}

// checkHostsOutputs refuses, before any file is read, what a report of
// several files cannot write: a format other than Markdown, JSON or CSV,
// and a picture other than the speedups.
func checkHostsOutputs(outs []destination, plot *plotSet) error {
	for _, out := range outs {
		f := out.Format
		if f == "summary" || f == "md" {
			f = "markdown"
		}
		if !slices.Contains(reports.HostsFormats, f) {
			where := "stdout"
			if out.Path != "" {
				where = out.Path
			}
			return usagef("%s: a report of several result files is written as %s, not %s; give one of those (--format or --out FILE:FORMAT), or report one file at a time", where, strings.Join(reports.HostsFormats, ", "), out.Format)
		}
	}
	if plot == nil {
		return nil
	}
	for _, p := range plot.files {
		if p.kind != reports.PlotSpeedup && !p.beside {
			return usagef("--plot %s:%s: a report of several result files draws each host's speedups (--plot FILE.png), not the %s picture; draw it from one file", p.kind, p.file.name, p.kind)
		}
	}
	return nil
}

// reportHosts reads files and writes them side by side, grouped by by.
func reportHosts(ctx context.Context, files []string, by []string, outs []destination, plot *plotSet, stdout, stderr io.Writer) error {
	if err := checkHostsOutputs(outs, plot); err != nil {
		return err
	}
	var hfs []reports.HostFile
	for _, path := range files {
		rep, err := readReportCtx(ctx, path)
		if err != nil {
			return err
		}
		hfs = append(hfs, reports.HostFile{Path: path, Report: rep})
	}
	h, err := reports.NewHosts(hfs, by)
	var differs *reports.MethodDiffers
	if errors.As(err, &differs) {
		return usagef("%v", err)
	}
	if err != nil {
		return usagef("--by %v", err)
	}
	return writeHostsOutputs(ctx, h, outs, plot, stdout, stderr)
}

// writeHostsOutputs draws the picture, if asked, then renders h into
// every output, each naming the picture relative to its own directory;
// one output that fails does not keep the others from being written.
func writeHostsOutputs(ctx context.Context, h *reports.Hosts, outs []destination, plot *plotSet, stdout, stderr io.Writer) error {
	var errs []error
	if plot != nil {
		for _, p := range plot.files {
			if p.beside {
				continue
			}
			var buf bytes.Buffer
			err := reports.PlotHosts(ctx, &buf, strings.ToLower(filepath.Ext(p.file.name)), h)
			if err == nil {
				err = p.file.write(ctx, buf.Bytes(), stdout, stderr)
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("plot %s: %w", p.file.name, err))
				continue
			}
			if h.Plot == "" {
				h.Plot = p.file.name
			}
		}
	}
	for _, out := range outs {
		named := *h // the picture named from the output's directory
		if h.Plot != "" && out.Path != "" {
			if rel, err := filepath.Rel(filepath.Dir(out.Path), h.Plot); err == nil {
				named.Plot = rel
			}
		}
		var buf bytes.Buffer
		format := out.Format
		if format == "summary" {
			format = "markdown"
		}
		if err := reports.WriteHosts(ctx, &buf, format, &named, out.Format == "summary"); err != nil {
			errs = append(errs, err)
			continue
		}
		if out.Path == "" {
			if _, err := stdout.Write(buf.Bytes()); err != nil {
				errs = append(errs, fmt.Errorf("write report to stdout: %w", err))
			}
			continue
		}
		if err := out.file.write(ctx, buf.Bytes(), stdout, stderr); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
