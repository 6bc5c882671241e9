package reports

import (
	"bytes"
	"context"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/dbsock/dbsock/results"
)

// FuzzReport does what dbsock report does with a file: it reads it
// (results.ReadJSON) and, when the file is accepted, renders it in every
// format, as .hgrm files and as each picture. Nothing may panic: a file is
// refused, or rendered. The seeds are the reports of testdata, real runs
// among them.
func FuzzReport(f *testing.F) {
	for _, name := range []string{"atload-stacks.json", "report-apart.json", "hostile.json", "v1-two.json", "v1-paths.json"} {
		b, err := os.ReadFile("testdata/" + name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := results.ReadJSON(bytes.NewReader(b))
		if err != nil {
			return
		}
		for _, format := range Formats {
			if format != "hgrm" {
				_ = Write(io.Discard, format, r)
			}
		}
		_ = WriteContext(context.Background(), io.Discard, "summary", r)
		_, _ = Hgrm(r)
		for _, kind := range PlotKinds {
			err := PlotKindContext(context.Background(), io.Discard, ".svg", kind, r)
			if err != nil && strings.Contains(err.Error(), "runtime error") {
				t.Fatalf("the %s picture: %v", kind, err)
			}
		}
	})
}
