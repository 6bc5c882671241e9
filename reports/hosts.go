package reports

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/reports/words"
	"github.com/dbsock/dbsock/results"
)

// Many hosts, one table: the result files of several hosts as a matrix,
// a row per case and path and a column per host, each cell that host's
// own paired comparison as its own report gives it (never a ratio of two
// hosts' latencies), and the host facts beneath, those that differ
// marked.

// HostFile is one result file of a report of several hosts: where it was
// read from, and what it holds.
type HostFile struct {
	Path   string
	Report *results.Report
}

// HostsSchema names the layout of the JSON a report of several hosts
// writes.
const HostsSchema = "dbsock-hosts/1"

// Hosts is a report of several hosts: one matrix, or one per group of
// files when they were grouped (--by).
type Hosts struct {
	Schema   string   `json:"schema"`
	By       []string `json:"by,omitempty"`
	Matrices []Matrix `json:"matrices"`
	// Plot is the picture written with the report (--plot), if any.
	Plot string `json:"plot,omitempty"`
}

// Matrix is the files of one group side by side.
type Matrix struct {
	// Group is the value of each --by field its files share (nil when
	// the files were not grouped).
	Group []GroupValue `json:"group,omitempty"`
	Hosts []MatrixHost `json:"hosts"`
	Rows  []MatrixRow  `json:"rows"`
	// Facts are the host facts, each host's value in the order of Hosts.
	Facts []MatrixFact `json:"facts"`
}

// GroupValue is one --by field's value in a group.
type GroupValue struct {
	Field string `json:"field"`
	Value string `json:"value"`
}

// MatrixHost is one column: the host's label (its file's --host, else
// the file's name), and the file.
type MatrixHost struct {
	Label string `json:"label"`
	File  string `json:"file"`
}

// MatrixRow is one case and pair of paths, and each host's comparison of
// them (nil where the host's file has no such case).
type MatrixRow struct {
	results.Case
	Baseline drivers.Transport `json:"baseline"`
	Path     drivers.Transport `json:"path"`
	Cells    []*MatrixCell     `json:"cells"`
}

// MatrixCell is one host's paired comparison of a row's paths, as its own
// report gives it.
type MatrixCell struct {
	SpeedupP50   float64             `json:"speedup_p50"`
	SpeedupP50CI *results.Interval   `json:"speedup_p50_ci,omitempty"`
	VerdictKind  results.VerdictKind `json:"verdict_kind"`
	Verdict      string              `json:"verdict"`
	// Short is the verdict's first words, as a headline table gives them.
	Short string `json:"verdict_short"`
	// Warned says the host's report has a warning on the case or its
	// target: its details say why.
	Warned bool `json:"warned,omitempty"`
	// Layers are the host's p50 on the row's two paths split into layers
	// (its file's --explain), nil where its file does not split the case.
	Layers *results.Layers `json:"layers,omitempty"`
	// Shift is how the speedup of the host's layers' sums moved from the
	// reference host's (Against: the first host of the row with layers),
	// shared among the layers; nil for the reference itself.
	Shift   *results.Shift `json:"shift,omitempty"`
	Against string         `json:"shift_against,omitempty"`
}

// MatrixFact is one host fact and each host's value of it.
type MatrixFact struct {
	Name    string   `json:"name"`
	Values  []string `json:"values"`
	Differs bool     `json:"differs"`
}

// rowKey is what makes two hosts' cases one row.
type rowKey struct {
	c          results.Case
	base, path drivers.Transport
}

// NewHosts sets files side by side: one matrix, or with by (MethodFields'
// names) one per group of files that share those fields. Files whose
// method differs otherwise are refused (*MethodDiffers).
func NewHosts(files []HostFile, by []string) (*Hosts, error) {
	groups, err := groupFiles(files, by)
	if err != nil {
		return nil, err
	}
	h := &Hosts{Schema: HostsSchema, By: by}
	for _, g := range groups {
		if err := sameMethod(g.files, by); err != nil {
			return nil, err
		}
		m := newMatrix(g.files)
		m.Group = g.values
		h.Matrices = append(h.Matrices, m)
	}
	return h, nil
}

// newMatrix is files side by side, each report cleaned (plainCopy) and
// its verdicts worded as its own report words them.
func newMatrix(files []HostFile) Matrix {
	var m Matrix
	index := map[rowKey]int{}
	var reports []*results.Report
	for col, f := range files {
		r := words.Fill(plainCopy(f.Report))
		reports = append(reports, r)
		m.Hosts = append(m.Hosts, MatrixHost{Label: hostLabel(files, col), File: plainText(f.Path)})
		warned := warnedTargets(r)
		parts := results.Decompose(r)
		for i := range r.Summary {
			s := &r.Summary[i]
			for j := range s.Comparisons {
				c := &s.Comparisons[j]
				k := rowKey{s.Case, orBase(c.Baseline), c.Path} // a file of an older dbsock leaves the baseline out
				if _, ok := index[k]; !ok {
					index[k] = len(m.Rows)
					m.Rows = append(m.Rows, MatrixRow{Case: s.Case, Baseline: k.base, Path: c.Path, Cells: make([]*MatrixCell, len(files))})
				}
				x := cellOf(s, c, warned[s.Target])
				x.Layers = results.LayersOf(parts, s.Case, k.base, c.Path)
				m.Rows[index[k]].Cells[col] = x
			}
		}
	}
	for _, row := range m.Rows {
		setShifts(row, m.Hosts)
	}
	m.Facts = matrixFacts(m.Hosts, reports)
	return m
}

// setShifts sets against the row's reference host, the first whose file
// splits the case into layers, every other host's layers.
func setShifts(row MatrixRow, hosts []MatrixHost) {
	ref := layersRef(row)
	if ref < 0 {
		return
	}
	for _, x := range row.Cells[ref+1:] {
		if x != nil && x.Layers != nil {
			x.Shift, x.Against = results.ShiftFrom(row.Cells[ref].Layers, x.Layers), hosts[ref].Label
		}
	}
}

// layersRef is the index of the row's reference host for its layers, -1
// where no host's file splits the case.
func layersRef(row MatrixRow) int {
	return slices.IndexFunc(row.Cells, func(x *MatrixCell) bool { return x != nil && x.Layers != nil })
}

// cellOf is a host's comparison c of case s as a cell.
func cellOf(s *results.Summary, c *results.Comparison, warned bool) *MatrixCell {
	short := words.ShortPathVerdict(c)
	if c.Path == results.Socket() && (c.Baseline == results.DefaultBaseline() || c.Baseline == "") {
		short = words.ShortVerdict(s, c)
	}
	return &MatrixCell{SpeedupP50: c.SpeedupP50, SpeedupP50CI: c.SpeedupP50CI, VerdictKind: c.VerdictKind,
		Verdict: c.Verdict, Short: short, Warned: warned || len(s.Warnings) > 0}
}

// warnedTargets are r's targets with a warning.
func warnedTargets(r *results.Report) map[string]bool {
	out := map[string]bool{}
	for _, t := range r.Targets {
		out[t.Name] = len(t.Warnings) > 0 || t.Error != ""
	}
	return out
}

// hostLabel is file col's column name: its host label (--host), else its
// file's name without .json; where two columns would share one, each is
// followed by its file's name.
func hostLabel(files []HostFile, col int) string {
	label := func(f HostFile) string {
		if h := plainText(f.Report.Environment.Host); h != "" {
			return h
		}
		return plainText(strings.TrimSuffix(filepath.Base(f.Path), ".json"))
	}
	l := label(files[col])
	for i, f := range files {
		if i != col && label(f) == l {
			return l + " (" + plainText(files[col].Path) + ")"
		}
	}
	return l
}

// matrixFacts are the host facts side by side, in the order of the first
// host's (a fact only another host has after them), each marked where
// the hosts' values differ.
func matrixFacts(hosts []MatrixHost, reports []*results.Report) []MatrixFact {
	facts := []MatrixFact{{Name: "file", Values: make([]string, len(hosts))}}
	for i, h := range hosts {
		facts[0].Values[i] = h.File
	}
	index := map[string]int{}
	for col, r := range reports {
		for _, f := range hostFacts(r) {
			i, ok := index[f.name]
			if !ok {
				i = len(facts)
				index[f.name] = i
				facts = append(facts, MatrixFact{Name: f.name, Values: make([]string, len(hosts))})
			}
			facts[i].Values[col] = f.value
		}
	}
	for i := range facts[1:] {
		f := &facts[i+1]
		f.Differs = slices.ContainsFunc(f.Values, func(v string) bool { return v != f.Values[0] })
	}
	return facts
}

// pathPair names a row's paths: "Unix vs TCP".
func pathPair(row MatrixRow) string {
	return fmt.Sprintf("%s vs %s", row.Path.Label(), orBase(row.Baseline).Label())
}
