package reports

import (
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
	c := reflect.New(reflect.TypeOf(*r)).Elem()
	copyClean(c, reflect.ValueOf(r).Elem(), "")
	return c.Addr().Interface().(*results.Report)
}

// copyClean copies src into dst, each string through safeText but fields
// called Histogram, without ever copying a long string whole.
func copyClean(dst, src reflect.Value, field string) {
	switch src.Kind() {
	case reflect.String:
		if field == "Histogram" {
			dst.SetString(src.String())
		} else {
			dst.SetString(safeText(src.String()))
		}
	case reflect.Pointer:
		if !src.IsNil() {
			n := reflect.New(src.Type().Elem())
			copyClean(n.Elem(), src.Elem(), field)
			dst.Set(n)
		}
	case reflect.Struct:
		t := src.Type()
		for i := 0; i < t.NumField(); i++ {
			if !t.Field(i).IsExported() {
				dst.Set(src) // a value of its own kind (time.Time): copied as it is
				return
			}
		}
		for i := 0; i < t.NumField(); i++ {
			copyClean(dst.Field(i), src.Field(i), t.Field(i).Name)
		}
	case reflect.Slice:
		if src.IsNil() {
			return
		}
		dst.Set(reflect.MakeSlice(src.Type(), src.Len(), src.Len()))
		for i := 0; i < src.Len(); i++ {
			copyClean(dst.Index(i), src.Index(i), field)
		}
	case reflect.Map:
		if src.IsNil() {
			return
		}
		dst.Set(reflect.MakeMapWithSize(src.Type(), src.Len()))
		for _, k := range src.MapKeys() {
			v := reflect.New(src.Type().Elem()).Elem()
			copyClean(v, src.MapIndex(k), field)
			key := reflect.New(k.Type()).Elem()
			copyClean(key, k, "")
			dst.SetMapIndex(key, v)
		}
	default:
		dst.Set(src)
	}
}

// safeText is s on one line, cut to maxField characters (with …), with
// < and > outside `code spans` written as entities.
func safeText(s string) string {
	if len(s) > 4*maxField { // cut first: a huge string is never copied whole
		s = strings.ToValidUTF8(s[:4*maxField], "")
	}
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

// codeSpan is s, a safe text (safeText), as a Markdown code span: inside
// one, Markdown and HTML show every character as it is, so the entities
// safeText wrote for < and > become the characters again (a threshold
// reads "lo>=1.0", not "lo&gt;=1.0"). A text with a backtick, which would
// end the span, stays plain.
func codeSpan(s string) string {
	if strings.Contains(s, "`") {
		return s
	}
	return "`" + strings.NewReplacer("&lt;", "<", "&gt;", ">").Replace(s) + "`"
}

// cell is a string for a Markdown table cell: a | would end the cell, so
// it is escaped (GFM reads \| as | in a cell, code spans included).
func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
