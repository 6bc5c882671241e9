package reports

import (
	"bytes"
	"encoding/csv"
	"strings"
	"testing"

	"golang.org/x/perf/benchfmt"
)

func TestBenchFmtParsesWithBenchfmt(t *testing.T) {
	var buf bytes.Buffer
	if err := BenchFmt(&buf, fixture(t)); err != nil {
		t.Fatal(err)
	}
	golden(t, "report.bench", buf.Bytes())
	rd := benchfmt.NewReader(bytes.NewReader(buf.Bytes()), "report.bench")
	seen := map[string]int{}
	for rd.Scan() {
		switch rec := rd.Result().(type) {
		case *benchfmt.Result:
			_, parts := rec.Name.Parts()
			name := string(rec.Name.Base()) + strings.Join(partsToStrings(parts), "")
			seen[name]++
			if v, ok := rec.Value("sec/op"); !ok || v <= 0 {
				t.Errorf("%s: no positive sec/op (ns/op)", name)
			}
			if rec.GetConfig("server-redis") != "Redis 7.0.15" {
				t.Errorf("%s: server-redis config = %q", name, rec.GetConfig("server-redis"))
			}
		case *benchfmt.SyntaxError:
			t.Errorf("syntax error: %v", rec)
		}
	}
	if err := rd.Err(); err != nil {
		t.Fatal(err)
	}
	// One line per block: 2 rounds of 4 blocks per transport.
	want := map[string]int{"PK/target=redis/conc=1/size=6/transport=tcp": 8, "PK/target=redis/conc=1/size=6/transport=unix": 8}
	for k, n := range want {
		if seen[k] != n {
			t.Errorf("%s: %d results, want %d (seen %v)", k, seen[k], n, seen)
		}
	}
}

func TestBlocksCSV(t *testing.T) {
	var buf bytes.Buffer
	if err := Write(&buf, "blocks", fixture(t)); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 17 || strings.Join(rows[0], ",") != strings.Join(BlocksCSVHeader, ",") {
		t.Fatalf("got %d rows (header %v), want a header and 16 blocks", len(rows), rows[0])
	}
	// Round 1's first TCP block: p50 10 µs, started 1 s after the report.
	if got := strings.Join(rows[1], ","); got != "redis,pk,1,6,,0,tcp,1,0,0,1000000000,12500,1,0,10000,10000.0,10000,false,1" {
		t.Fatalf("first block row %q", got)
	}
	if out, err := ParseOutput("b.csv:blocks"); err != nil || out.Format != "blocks" {
		t.Fatalf("ParseOutput(b.csv:blocks) = %+v, %v", out, err)
	}
}

func partsToStrings(parts [][]byte) []string {
	out := make([]string, len(parts))
	for i, p := range parts {
		out[i] = string(p)
	}
	return out
}

func TestCSVOneRowPerRun(t *testing.T) {
	var buf bytes.Buffer
	r := fixture(t)
	if err := CSV(&buf, r); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1+len(r.Runs) || strings.Join(rows[0], ",") != strings.Join(CSVHeader, ",") {
		t.Fatalf("got %d rows, header %v", len(rows), rows[0])
	}
	if rows[1][0] != "redis" || rows[1][2] != "1" || rows[1][3] != "6" || rows[1][6] != "tcp" || rows[1][7] != "1" || rows[1][11] != "11007" {
		t.Fatalf("first row %v", rows[1])
	}
	// The server instance is the last column: two runs that differ only
	// in it stay two rows a reader can tell apart.
	r.Runs[1] = r.Runs[0]
	r.Runs[1].Instance = 2
	buf.Reset()
	if err := CSV(&buf, r); err != nil {
		t.Fatal(err)
	}
	rows, _ = csv.NewReader(&buf).ReadAll()
	if last := len(CSVHeader) - 1; CSVHeader[last] != "instance" || rows[1][last] != "1" || rows[2][last] != "2" {
		t.Fatalf("instance column: header %q, rows %q and %q", CSVHeader[last], rows[1], rows[2])
	}
}

func TestParseOutput(t *testing.T) {
	tests := []struct {
		spec, path, format, err string
	}{
		{"r.md", "r.md", "markdown", ""},
		{"r.json", "r.json", "json", ""},
		{"out/r.csv", "out/r.csv", "csv", ""},
		{"r.txt:benchfmt", "r.txt", "benchfmt", ""},
		{"r.bench", "r.bench", "benchfmt", ""},
		{"C:/x:json", "C:/x", "json", ""},
		{"r.txt", "", "", "cannot tell the format"},
		{"r.txt:yaml", "", "", "cannot tell the format"},
	}
	for _, tt := range tests {
		got, err := ParseOutput(tt.spec)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("ParseOutput(%q) error %v, want %q", tt.spec, err, tt.err)
			}
			continue
		}
		if err != nil || got.Path != tt.path || got.Format != tt.format {
			t.Errorf("ParseOutput(%q) = %+v, %v; want %s %s", tt.spec, got, err, tt.path, tt.format)
		}
	}
}

// TestOutputOfNoFormatNamesEveryExtension: an --out whose extension names
// no format (report.pdf) is refused with every extension that does, .html
// among them, and each of those is read as its format.
func TestOutputOfNoFormatNamesEveryExtension(t *testing.T) {
	_, err := ParseOutput("report.pdf")
	if err == nil || !strings.Contains(err.Error(), "use an extension .md, .html, .json, .csv or .bench") {
		t.Fatalf("report.pdf: %v; want the extensions, .html among them", err)
	}
	for _, ext := range []string{".md", ".html", ".json", ".csv", ".bench"} {
		if f, ok := FormatOfPath("r" + ext); !ok || !strings.Contains(err.Error(), ext) {
			t.Errorf("%s is format %q (%v), and the error names it: %v", ext, f, ok, strings.Contains(err.Error(), ext))
		}
	}
}

func TestHTMLIsOneSelfContainedPage(t *testing.T) {
	var buf bytes.Buffer
	if err := Write(&buf, "html", fixture(t)); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	for _, want := range []string{"<!doctype html>", "<table>", "<td>redis</td>", "<svg", "<h2 id=\"details\">Details</h2>", "Unix faster: 32.2% lower p50"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	for _, banned := range []string{"<script", "<link", "src=\"http", "secret", "<?xml"} {
		if strings.Contains(page, banned) {
			t.Errorf("page holds %q", banned)
		}
	}
	if f, ok := FormatOfPath("r.html"); !ok || f != "html" {
		t.Fatalf("r.html is format %q", f)
	}
}
