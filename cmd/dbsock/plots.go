package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/dbsock/dbsock/reports"
	"github.com/dbsock/dbsock/results"
)

// The pictures --plot asks for: [KIND:]FILE, repeatable.

// plotFile is one picture and where it goes.
type plotFile struct {
	kind reports.PlotKind
	file outFile
	// beside: drawn only when the report has something for it (all:FILE's
	// other pictures), silently left out otherwise.
	beside bool
}

// plotSet is every picture of a run.
type plotSet struct{ files []plotFile }

// resolvePlots checks every --plot before the run: its picture's name,
// its extension and its file (claimed so that no two outputs share one).
func (o *outputOptions) resolvePlots(claim func(string, outFile) error) (*plotSet, error) {
	if len(o.plots) == 0 {
		return nil, nil
	}
	set := &plotSet{}
	add := func(kind reports.PlotKind, path string, beside bool) error {
		f, err := checkOutFile("--plot", path)
		if err != nil {
			return err
		}
		if err := claim("--plot", f); err != nil {
			return err
		}
		set.files = append(set.files, plotFile{kind: kind, file: f, beside: beside})
		return nil
	}
	for _, spec := range o.plots {
		kind, path, err := reports.ParsePlot(spec)
		if err != nil {
			return nil, usagef("--plot: %v", err)
		}
		if kind != reports.PlotAll {
			if err := add(kind, path, false); err != nil {
				return nil, err
			}
			continue
		}
		if err := add(reports.PlotSpeedup, path, false); err != nil {
			return nil, err
		}
		for _, k := range reports.PlotKinds[1 : len(reports.PlotKinds)-1] {
			if err := add(k, reports.BesidePath(path, k), true); err != nil {
				return nil, err
			}
		}
	}
	return set, nil
}

// draw writes every picture, and sets rep.Plot to the speedups' file (else
// the first written) for the Markdown to link; a picture beside another
// that has nothing to draw is left out.
func (ps *plotSet) draw(ctx context.Context, rep *results.Report, stdout, stderr io.Writer) []error {
	var errs []error
	linked := false // rep.Plot names the speedups
	for _, p := range ps.files {
		var buf bytes.Buffer
		err := reports.PlotKindContext(ctx, &buf, strings.ToLower(filepath.Ext(p.file.name)), p.kind, rep)
		if err != nil && p.beside && strings.HasPrefix(err.Error(), "nothing to plot") {
			continue
		}
		if err == nil {
			err = p.file.write(ctx, buf.Bytes(), stdout, stderr)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("plot %s: %w", p.file.name, err))
			continue
		}
		if !linked && (p.kind == reports.PlotSpeedup || rep.Plot == "") {
			rep.Plot, linked = p.file.name, p.kind == reports.PlotSpeedup
		}
	}
	return errs
}
