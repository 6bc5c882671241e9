package reports

import (
	"encoding/json"
	"reflect"
	"strings"
	"unicode/utf8"

	"github.com/dbsock/dbsock/results"
)

// maxField is the most of one report string that Markdown (and HTML)
// renders: a report file is input, and one long field must not make a
// report of gigabytes (every environment row is padded to the table's
// widest cell).
const maxField = 512

// safeCopy is r with every string made safe to render as Markdown: one
// line, at most maxField characters, and outside code spans < and > as
// entities, so that a report file cannot inject HTML or break the layout.
// Encoded histograms are left whole. Rendering the copy again changes
// nothing.
func safeCopy(r *results.Report) *results.Report {
	b, err := json.Marshal(r)
	if err != nil {
		return r // cannot happen for a report that was rendered at all
	}
	var c results.Report
	if json.Unmarshal(b, &c) != nil {
		return r
	}
	c.Plot = r.Plot // a path dbsock itself chose
	cleanStrings(reflect.ValueOf(&c).Elem(), "")
	return &c
}

// cleanStrings makes every string reachable from v safe (safeText), but
// fields called Histogram.
func cleanStrings(v reflect.Value, field string) {
	switch v.Kind() {
	case reflect.String:
		if field != "Histogram" && v.CanSet() {
			v.SetString(safeText(v.String()))
		}
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			cleanStrings(v.Elem(), field)
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				cleanStrings(v.Field(i), v.Type().Field(i).Name)
			}
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			cleanStrings(v.Index(i), field)
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			e := reflect.New(v.Type().Elem()).Elem()
			e.Set(v.MapIndex(k))
			cleanStrings(e, field)
			key := k
			if k.Kind() == reflect.String {
				key = reflect.ValueOf(safeText(k.String())).Convert(k.Type())
				v.SetMapIndex(k, reflect.Value{})
			}
			v.SetMapIndex(key, e)
		}
	}
}

// safeText is s on one line, cut to maxField characters (with …), with
// < and > outside `code spans` written as entities.
func safeText(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) > maxField {
		s = string([]rune(s)[:maxField-1]) + "…"
	}
	if !strings.ContainsAny(s, "<>") {
		return s
	}
	var b strings.Builder
	code := false
	for _, c := range s {
		switch {
		case c == '`':
			code = !code
			b.WriteRune(c)
		case c == '<' && !code:
			b.WriteString("&lt;")
		case c == '>' && !code:
			b.WriteString("&gt;")
		default:
			b.WriteRune(c)
		}
	}
	return b.String()
}

// cell is a string for a Markdown table cell: a | would end the cell, so
// it is escaped (GFM reads \| as | in a cell, code spans included).
func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
