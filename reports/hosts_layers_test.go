package reports

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"strings"
	"testing"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/results"
)

// withLayers is host label's file with --explain's floor and echo, and
// its redis case's p50s set (µs, TCP then Unix): floor, echo, redis.
func withLayers(t *testing.T, label string, floor, echo, redis [2]int64) HostFile {
	f := hostFile(t, label, "Not affected")
	r := f.Report
	sides := func(p [2]int64) []results.PathSide {
		return []results.PathSide{{Path: drivers.TCP, Side: results.Side{Latency: results.Latency{P50: p[0] * 1000}}},
			{Path: drivers.Unix, Side: results.Side{Latency: results.Latency{P50: p[1] * 1000}}}}
	}
	for i, p := range r.Summary[0].Sides {
		r.Summary[0].Sides[i].Latency.P50 = map[drivers.Transport]int64{drivers.TCP: redis[0], drivers.Unix: redis[1]}[p.Path] * 1000
	}
	r.Targets = append(r.Targets, results.Target{Name: "floor", Layer: drivers.LayerKernel}, results.Target{Name: "echo", Layer: drivers.LayerRuntime})
	r.Summary = append(r.Summary, results.Summary{Case: results.Case{Target: "floor", Scenario: "pk", Concurrency: 1, ValueSize: 4}, Sides: sides(floor)},
		results.Summary{Case: results.Case{Target: "echo", Scenario: "pk", Concurrency: 1, ValueSize: 4}, Sides: sides(echo)})
	return f
}

func hostsMarkdown(t *testing.T, h *Hosts) string {
	t.Helper()
	var md bytes.Buffer
	if err := WriteHosts(context.Background(), &md, "markdown", h, false); err != nil {
		t.Fatal(err)
	}
	return md.String()
}

// TestHostLayersNameTheLayerThatMovedTheSpeedup: two hosts' layers, worked
// by hand (µs, TCP/Unix).
//
//	a: floor 10/6, echo 15/11, redis 35/31: kernel 10/6, client 5/5, server 20/20; speedup 35/31 = 1.129032
//	b: floor 12/6, echo 17/11, redis 57/51: kernel 12/6, client 5/5, server 40/40; speedup 57/51 = 1.117647
//
// The change is 57/51 - 35/31 = -0.011385. Every layer moves from a's
// value to b's together, and each is credited with its own move's change
// of the speedup along the way: with B, P the TCP and Unix sums, dB 22,
// dP 20,
//
//	I1 = ∫ dt/P = ln(51/31)/20 = 0.0248919
//	I2 = ∫ B/P² dt = (22/20) I1 + (35 - 22*31/20)/(31*51) = 0.0279504
//	kernel: dB 2, dP 0: 2 I1 = +0.049784
//	client: did not move: 0
//	server: dB 20, dP 20: 20 (I1 - I2) = -0.061169, all of it its level's (its gap is 0 on both)
//
// The shares add up to the change, and the server's, in its direction,
// is the larger: named, by its level.
func TestHostLayersNameTheLayerThatMovedTheSpeedup(t *testing.T) {
	a := withLayers(t, "a", [2]int64{10, 6}, [2]int64{15, 11}, [2]int64{35, 31})
	b := withLayers(t, "b", [2]int64{12, 6}, [2]int64{17, 11}, [2]int64{57, 51})
	h, err := NewHosts([]HostFile{a, b}, nil)
	if err != nil {
		t.Fatal(err)
	}
	x := h.Matrices[0].Rows[0].Cells[1]
	if x.Shift == nil || x.Shift.Layer != results.LayerServer || x.Shift.By != "level" || x.Against != "a" {
		t.Fatalf("shift %+v against %q, want the server's level against a", x.Shift, x.Against)
	}
	md := hostsMarkdown(t, h)
	for _, want := range []string{
		"| redis | pk, 6 B values | Unix vs TCP | kernel floor | TCP 10.0 µs, Unix 6.0 µs | TCP 12.0 µs, Unix 6.0 µs |",
		"| | | | + server work and protocol | TCP +20.0 µs, Unix +20.0 µs | TCP +40.0 µs, Unix +40.0 µs |",
		"| | | | TCP p50 / Unix p50 | 1.13× | 1.12× |",
		"- a: the reference: TCP p50 / Unix p50 1.13×.",
		"- b: TCP p50 / Unix p50 is 1.12× on b against 1.13× on a (-0.011); the layer that moved it most is the server's work and protocol (-0.061: its level -0.061, its gap +0.000), " +
			"which both paths pay: a mean of 40.0 µs on b (40.0 over TCP, 40.0 over Unix), against 20.0 µs on a (20.0 and 20.0); " +
			"the others: the kernel floor +0.050, the Go client runtime +0.000 (the shares add up to -0.011).",
		"Aumann-Shapley value",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("Markdown lacks %q:\n%s", want, md)
		}
	}
	var c bytes.Buffer
	if err := WriteHosts(context.Background(), &c, "csv", h, false); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&c).ReadAll()
	if err != nil || len(recs) != 3 {
		t.Fatalf("CSV: %v, %q", err, recs)
	}
	col := map[string]string{}
	for i, name := range recs[0] {
		col[name] = recs[2][i]
	}
	if col["server_baseline_ns"] != "40000.0" || col["shift_layer"] != "server" || col["shift_against"] != "a" || col["server_share"] != "-0.0612" || col["kernel_share"] != "0.0498" {
		t.Errorf("CSV row of b: %v", col)
	}
}

// TestHostLayersSayNothingWithoutLayers: no file split by --explain, no
// word of layers in any format.
func TestHostLayersSayNothingWithoutLayers(t *testing.T) {
	h, err := NewHosts([]HostFile{hostFile(t, "a", "Not affected"), hostFile(t, "b", "Not affected")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	md := hostsMarkdown(t, h)
	for _, bad := range []string{"p50 goes", "layer", "kernel floor", "reference"} {
		if strings.Contains(md, bad) {
			t.Errorf("Markdown without layers says %q:\n%s", bad, md)
		}
	}
	var j bytes.Buffer
	if err := WriteHosts(context.Background(), &j, "json", h, false); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(j.String(), `"layers"`) || strings.Contains(j.String(), `"shift"`) {
		t.Errorf("JSON without layers has them:\n%s", j.String())
	}
}

// TestHostLayersSayWhichHostLacksThem: the first host's file has none
// (and a label that is Markdown), the second's has: the second is the
// reference, the first named as lacking them, its label escaped.
func TestHostLayersSayWhichHostLacksThem(t *testing.T) {
	a := hostFile(t, "<b>a|1</b>", "Not affected")
	b := withLayers(t, "b", [2]int64{12, 6}, [2]int64{17, 11}, [2]int64{57, 51})
	h, err := NewHosts([]HostFile{a, b}, nil)
	if err != nil {
		t.Fatal(err)
	}
	row := h.Matrices[0].Rows[0]
	if row.Cells[0].Layers != nil || row.Cells[1].Layers == nil || row.Cells[1].Shift != nil {
		t.Fatalf("cells %+v %+v: want b's layers alone, set against no one", row.Cells[0], row.Cells[1])
	}
	md := hostsMarkdown(t, h)
	for _, want := range []string{"- &lt;b&gt;a\\|1&lt;/b&gt;: no layers: its file does not split this case (it was run without `--explain`",
		"- b: the reference: TCP p50 / Unix p50 1.12×.", "| | | | = p50 | – | TCP 57.0 µs, Unix 51.0 µs |"} {
		if !strings.Contains(md, want) {
			t.Errorf("Markdown lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "<b>") {
		t.Errorf("a label from a file raised HTML:\n%s", md)
	}
	var back Hosts
	var j bytes.Buffer
	if err := WriteHosts(context.Background(), &j, "json", h, false); err != nil || json.Unmarshal(j.Bytes(), &back) != nil {
		t.Fatal(err)
	}
	if back.Matrices[0].Rows[0].Cells[1].Layers.Speedup() != 57.0/51 {
		t.Errorf("JSON read back: %+v", back.Matrices[0].Rows[0].Cells[1].Layers)
	}
}

// TestHostLayersWordAGap: b's kernel and client gaps widened and its
// server's work tripled; the speedup rose, the kernel named by its gap
// (results' TestShiftNamesALayerThatMovedTheSpeedupItsWay works the
// shares by hand: kernel +0.103587, of which its gap's +0.111861 and its
// level's -0.008274).
func TestHostLayersWordAGap(t *testing.T) {
	a := withLayers(t, "a", [2]int64{10, 6}, [2]int64{15, 11}, [2]int64{35, 31})
	b := withLayers(t, "b", [2]int64{15, 6}, [2]int64{24, 11}, [2]int64{84, 71})
	h, err := NewHosts([]HostFile{a, b}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := "the layer that moved it most is the kernel floor (+0.104: its gap +0.112, its level -0.008): it costs 9.0 µs more over TCP than over Unix on b " +
		"(15.0 against 6.0 µs), against 4.0 µs more on a (10.0 against 6.0 µs); the others: the Go client runtime +0.083, the server's work and protocol -0.132"
	if md := hostsMarkdown(t, h); !strings.Contains(md, want) {
		t.Errorf("Markdown lacks %q:\n%s", want, md)
	}
}
