// Package reports renders a results.Report: Markdown for blog posts and
// READMEs, JSON, CSV and Go benchmark format for CI, and plots (SVG, PNG).
// Every renderer only reads the report; nothing here
// measures.
package reports

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/dbsock/dbsock/reports/words"
	"github.com/dbsock/dbsock/results"
)

// Formats lists the output formats by name.
// "blocks" is a CSV table with one row per block; "hgrm" writes a
// directory of HdrHistogram percentile files (Hgrm), so it needs --out DIR:hgrm.
var Formats = []string{"markdown", "html", "json", "csv", "blocks", "benchfmt", "hgrm"}

// Write renders r in format to w.
func Write(w io.Writer, format string, r *results.Report) error {
	return WriteContext(context.Background(), w, format, r)
}

// WriteContext is Write that stops once ctx ends (an interrupt), with
// ctx's error: before it starts, and between the HTML page's chart
// panels.
func WriteContext(ctx context.Context, w io.Writer, format string, r *results.Report) error {
	if err := interrupted(ctx); err != nil {
		return err
	}
	switch format { // each renders a copy: reports never changes what it renders
	case "markdown", "md":
		return Markdown(w, r)
	case "summary":
		return MarkdownSummary(w, r)
	case "html":
		return htmlContext(ctx, w, r)
	}
	r = words.Fill(plainCopy(r)) // JSON and CSV escape for themselves
	switch format {
	case "json":
		return r.WriteJSON(w)
	case "csv":
		return CSV(w, r)
	case "blocks":
		return BlocksCSV(w, r)
	case "benchfmt":
		return BenchFmt(w, r)
	case "hgrm":
		return fmt.Errorf("format hgrm writes one file per target and path: write it to a directory, not to one stream")
	}
	return fmt.Errorf("unknown format %q (want %s)", format, strings.Join(Formats, ", "))
}

// interrupted is an error once ctx has ended: rendering stops there.
func interrupted(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("interrupted while rendering the report: %w", err)
	}
	return nil
}

// Output is one destination: a file path ("" for stdout) and a format.
type Output struct {
	Path   string
	Format string
}

// ParseOutput reads an --out value: "FILE:FORMAT", or FILE whose extension
// names the format (Extensions).
func ParseOutput(spec string) (Output, error) {
	if i := strings.LastIndexByte(spec, ':'); i > 0 {
		path, format := spec[:i], spec[i+1:]
		for _, f := range Formats {
			if format == f {
				return Output{Path: path, Format: format}, nil
			}
		}
		if format == "md" {
			return Output{Path: path, Format: "markdown"}, nil
		}
	}
	if f, ok := FormatOfPath(spec); ok {
		return Output{Path: spec, Format: f}, nil
	}
	return Output{}, fmt.Errorf("cannot tell the format of %q: use an extension %s, or say FILE:FORMAT with FORMAT one of %s", spec, ExtensionList(), strings.Join(Formats, ", "))
}

// Extensions are the file name endings that name a format, each format's
// first its usual one.
var Extensions = []struct{ Ext, Format string }{
	{".md", "markdown"}, {".markdown", "markdown"},
	{".html", "html"}, {".htm", "html"},
	{".json", "json"},
	{".csv", "csv"},
	{".bench", "benchfmt"}, {".benchfmt", "benchfmt"},
}

// ExtensionList is each format's usual extension, for help and errors:
// ".md, .html, .json, .csv or .bench".
func ExtensionList() string {
	var exts []string
	seen := map[string]bool{}
	for _, e := range Extensions {
		if !seen[e.Format] {
			seen[e.Format] = true
			exts = append(exts, e.Ext)
		}
	}
	return strings.Join(exts[:len(exts)-1], ", ") + " or " + exts[len(exts)-1]
}

// FormatOfPath guesses an output format from a file name's extension.
func FormatOfPath(path string) (string, bool) {
	for _, e := range Extensions {
		if strings.HasSuffix(path, e.Ext) {
			return e.Format, true
		}
	}
	return "", false
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
