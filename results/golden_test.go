package results

import (
	"bytes"
	"encoding/json"
	"flag"
	"hash/fnv"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata")

// TestReportJSONIsUnchanged marshals a report in which every field the
// JSON holds is set, each to a value drawn from its JSON key (so that
// grouping the Go fields differently gives the same report), and compares
// it with the JSON this layout has always written.
func TestReportJSONIsUnchanged(t *testing.T) {
	var r Report
	fill(reflect.ValueOf(&r).Elem(), "report")
	var b bytes.Buffer
	if err := r.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	golden(t, "testdata/golden-report.json", b.Bytes())
}

// TestReadReportWritesItAgain reads reports of both schema versions, with
// warnings on targets and cases, and writes them: the bytes are those the
// layout has always written for them.
func TestReadReportWritesItAgain(t *testing.T) {
	for _, name := range []string{"hostile", "v1-paths"} {
		f, err := os.Open("../reports/testdata/" + name + ".json")
		if err != nil {
			t.Fatal(err)
		}
		r, err := ReadJSON(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := r.WriteJSON(&b); err != nil {
			t.Fatal(err)
		}
		golden(t, "testdata/golden-"+name+".json", b.Bytes())
	}
}

func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
		for i := range min(len(gl), len(wl)) {
			if gl[i] != wl[i] {
				t.Fatalf("%s differs at line %d:\n got %s\nwant %s", path, i+1, gl[i], wl[i])
			}
		}
		t.Fatalf("%s differs: %d lines, want %d", path, len(gl), len(wl))
	}
}

// fill sets every exported field of v that JSON writes, recursively, to a
// value derived from key, the JSON key it is written under (a field
// embedded without a key keeps its parent's, as JSON flattens it).
func fill(v reflect.Value, key string) {
	h := fnv.New32a()
	h.Write([]byte(key))
	n := h.Sum32() % 1000
	if u, ok := v.Addr().Interface().(json.Unmarshaler); ok && u.UnmarshalJSON([]byte(`"`+key+`"`)) == nil {
		return // a value JSON writes as a string
	}
	if v.Type() == reflect.TypeOf(time.Time{}) {
		v.Set(reflect.ValueOf(time.Date(2026, 1, 2, 3, 4, 5, int(n), time.UTC)))
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(key)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(n + 1))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(n + 1))
	case reflect.Float32, reflect.Float64:
		v.SetFloat(float64(n+1) / 8)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem(), key)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fill(v.Index(0), key+"[0]")
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k := reflect.New(v.Type().Key()).Elem()
		fill(k, key+".key")
		e := reflect.New(v.Type().Elem()).Elem()
		fill(e, key+".value")
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.Struct:
		for i := range v.NumField() {
			f := v.Type().Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if !f.IsExported() || name == "-" {
				continue
			}
			switch {
			case f.Anonymous && name == "":
				fill(v.Field(i), key)
			case name == "":
				fill(v.Field(i), key+"."+f.Name)
			default:
				fill(v.Field(i), key+"."+name)
			}
		}
	}
}
