package reports

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/dbsock/dbsock/reports/words"
	"github.com/dbsock/dbsock/results"
)

// Which files a matrix may set side by side: those measured by one
// method. A host's cell is its own comparison, but two hosts' cells
// compare only where the hosts were asked the same thing: the same
// scenarios, key plan, value sizes and rates.

// MethodField is one way two files' runs can differ that makes their
// cells incomparable: its name (for --by), the report file's field, and
// its value in a file, in words.
type MethodField struct {
	Name, JSON string
	of         func(*results.Report) string
}

// MethodFields are the fields a matrix refuses files differing in, or
// groups them by (--by).
var MethodFields = []MethodField{
	{"scenario", "config.scenario", func(r *results.Report) string { return r.Config.Scenario }},
	{"keys", "config.workload", keyPlan},
	{"value-size", "config.value_sizes", valueSizes},
	{"rate", "config.rate", rates},
}

// MethodFieldNames are MethodFields' names, for help and errors:
// "scenario, keys, value-size or rate".
func MethodFieldNames() string {
	var names []string
	for _, f := range MethodFields {
		names = append(names, f.Name)
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// methodField is the field called name.
func methodField(name string) (MethodField, bool) {
	i := slices.IndexFunc(MethodFields, func(f MethodField) bool { return f.Name == name })
	if i < 0 {
		return MethodField{}, false
	}
	return MethodFields[i], true
}

// CheckBy says what is wrong with --by's fields: one that is no
// MethodField, or one named twice.
func CheckBy(by []string) error {
	for i, name := range by {
		if _, ok := methodField(name); !ok {
			return fmt.Errorf("%q is not a field files are grouped by; give %s", name, MethodFieldNames())
		}
		if slices.Contains(by[:i], name) {
			return fmt.Errorf("%q is named twice", name)
		}
	}
	return nil
}

// MethodDiffers is the error of two files whose method differs in Field:
// their cells cannot share a matrix.
type MethodDiffers struct {
	Field        MethodField
	FileA, FileB string
	A, B         string
}

func (e *MethodDiffers) Error() string {
	return fmt.Sprintf("%s and %s were measured differently, %s (%s) %q against %q, so their cells do not compare: report them apart, or group them with --by %s",
		e.FileA, e.FileB, e.Field.Name, e.Field.JSON, e.A, e.B, e.Field.Name)
}

// sameMethod is nil when files agree in every MethodField but those of
// by, else the first difference (*MethodDiffers).
func sameMethod(files []HostFile, by []string) error {
	for _, f := range MethodFields {
		if slices.Contains(by, f.Name) {
			continue
		}
		first := f.of(files[0].Report)
		for _, g := range files[1:] {
			if v := f.of(g.Report); v != first {
				return &MethodDiffers{Field: f, FileA: plainText(files[0].Path), FileB: plainText(g.Path), A: plainText(first), B: plainText(v)}
			}
		}
	}
	return nil
}

// fileGroup is files that share the values of the --by fields.
type fileGroup struct {
	values []GroupValue
	files  []HostFile
}

// groupFiles groups files by the fields of by, in the order the groups'
// first files come (one group without by).
func groupFiles(files []HostFile, by []string) ([]fileGroup, error) {
	if err := CheckBy(by); err != nil {
		return nil, err
	}
	var groups []fileGroup
	index := map[string]int{}
	for _, f := range files {
		var values []GroupValue
		var key strings.Builder
		for _, name := range by {
			field, _ := methodField(name)
			v := plainText(field.of(f.Report))
			values = append(values, GroupValue{Field: name, Value: v})
			fmt.Fprintf(&key, "%q,", v)
		}
		i, ok := index[key.String()]
		if !ok {
			i = len(groups)
			index[key.String()] = i
			groups = append(groups, fileGroup{values: values})
		}
		groups[i].files = append(groups[i].files, f)
	}
	return groups, nil
}

// keyPlan is what a file's ops read, in words: "10000 rows, uniform keys,
// read" ("one row" for a file of a dbsock that read one).
func keyPlan(r *results.Report) string {
	w := r.Config.Workload
	if w == nil {
		return "one row"
	}
	s := fmt.Sprintf("%d rows, %s keys", w.Rows, w.Keys)
	switch w.Keys {
	case "zipf":
		s += fmt.Sprintf(" (theta %g)", w.Theta)
	case "hotspot":
		s += fmt.Sprintf(" (%g of the rows get %g of the ops)", w.HotRows, w.HotOps)
	}
	s += ", " + strings.TrimSpace(w.Op+" "+w.Mix)
	for _, m := range []struct {
		what string
		by   map[string]string
	}{{"query", w.Query}, {"keys from", w.KeysFrom}} {
		for _, t := range slices.Sorted(maps.Keys(m.by)) {
			s += fmt.Sprintf(", %s's %s %s", t, m.what, m.by[t])
		}
	}
	return s
}

// valueSizes are the value sizes a file swept: "16 B, 1 KiB" ("the
// default" when none was asked).
func valueSizes(r *results.Report) string {
	var out []string
	for _, v := range r.Config.ValueSizes {
		out = append(out, results.FormatSize(v))
	}
	if len(out) == 0 {
		return "the default"
	}
	return strings.Join(out, ", ")
}

// rates are the rates a file offered: "closed loop", "2,000/s",
// "1,000/s, 2,000/s", or "auto".
func rates(r *results.Report) string {
	c := r.Config
	switch {
	case c.RateAuto:
		return "auto"
	case len(c.Rates) > 0:
		var out []string
		for _, x := range c.Rates {
			out = append(out, words.Thousands(x)+"/s")
		}
		return strings.Join(out, ", ")
	case c.Rate > 0:
		return words.Thousands(c.Rate) + "/s"
	}
	return "closed loop"
}
