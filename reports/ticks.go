package reports

import (
	"math"
	"strconv"

	"gonum.org/v1/plot"
)

// The charts' axis ticks: every axis readable, ratio axes marked at 1.0.

// withOne is plot's default ticks on a ratio axis, with a labelled tick
// at 1.0 (no difference) whether or not the default ticks have one.
type withOne struct{}

// Ticks implements plot.Ticker.
func (withOne) Ticks(min, max float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(min, max)
	for i, t := range ticks {
		if t.Value == 1 {
			ticks[i].Label = "1.0"
			return ticks
		}
	}
	if min <= 1 && 1 <= max {
		ticks = append(ticks, plot.Tick{Value: 1, Label: "1.0"})
	}
	return ticks
}

// logTicks labels a log axis at 1, 2 and 5 times each power of ten when
// it spans less than two decades (plot.LogTicks labels powers of ten only,
// which leaves a 14–90 µs axis with no label), and at the powers of ten,
// with 2 and 5 as minor ticks, when it spans more.
type logTicks struct{}

// Ticks implements plot.Ticker.
func (logTicks) Ticks(min, max float64) []plot.Tick {
	if min <= 0 || max <= min {
		return plot.LogTicks{Prec: -1}.Ticks(min, max)
	}
	few := math.Log10(max/min) < 2
	var ticks []plot.Tick
	for e := math.Floor(math.Log10(min)); e <= math.Ceil(math.Log10(max)); e++ {
		for _, m := range []float64{1, 2, 5} {
			v := m * math.Pow(10, e)
			if v < min || v > max {
				continue
			}
			t := plot.Tick{Value: v}
			if m == 1 || few {
				t.Label = strconv.FormatFloat(v, 'f', -1, 64)
			}
			ticks = append(ticks, t)
		}
	}
	return ticks
}
