// Package report renders a results.Report: Markdown for blog posts and
// READMEs, JSON for CI. Renderers only read the report; nothing here
// measures.
package report

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/dbsock/dbsock/internal/results"
)

// Formats lists the output formats by name.
var Formats = []string{"markdown", "json"}

// Write renders r in format to w.
func Write(w io.Writer, format string, r *results.Report) error {
	switch format {
	case "markdown", "md":
		return Markdown(w, r)
	case "json":
		return r.WriteJSON(w)
	}
	return fmt.Errorf("unknown format %q (want %s)", format, strings.Join(Formats, ", "))
}

// FormatOfPath guesses an output format from a file name's extension.
func FormatOfPath(path string) (string, bool) {
	switch {
	case strings.HasSuffix(path, ".md"), strings.HasSuffix(path, ".markdown"):
		return "markdown", true
	case strings.HasSuffix(path, ".json"):
		return "json", true
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
