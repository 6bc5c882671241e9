package reports

import (
	"bytes"
	"io"
	"os"
	"runtime"
	"testing"

	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/recorder"

	"github.com/dbsock/dbsock/results"
)

// FuzzReport does what dbsock report does with a file: it reads it
// (results.ReadJSON) and, when the file is accepted, renders it in every
// format and as .hgrm files, and lays out and draws every picture's panels
// (on a canvas that records what is drawn: the picture files' rasterizing
// and embedded fonts would take most of the fuzzer's time). Nothing may
// panic: a file is refused, or rendered; a picture that gonum/plot cannot
// draw is an error (PlotKindContext recovers it), but a runtime error is
// a bug. The seeds are the reports of testdata, real runs among them. Run
// it with -fuzz FuzzReport -fuzztime 3m -fuzzminimizetime 5s (a new input
// of a large report is otherwise minimized for a minute).
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
		for _, format := range append(Formats, "summary") {
			if format != "hgrm" {
				_ = Write(io.Discard, format, r)
			}
		}
		_, _ = Hgrm(r)
		if len(r.Summary) == 0 {
			return // nothing to plot: PlotKindContext says so
		}
		ps, err := panels(plainCopy(r))
		if err != nil {
			return
		}
		for _, p := range ps {
			drawRecorded(t, p)
		}
	})
}

// drawRecorded draws p on a canvas that records what is drawn, and fails
// t on a runtime error.
func drawRecorded(t *testing.T, p *panel) {
	defer func() {
		if e := recover(); e != nil {
			if _, ok := e.(runtime.Error); ok {
				t.Fatalf("drawing %q: %v", p.Title.Text, e)
			}
		}
	}()
	p.draw(draw.NewCanvas(&recorder.Canvas{}, figureWidth, panelHeight(2)))
}
