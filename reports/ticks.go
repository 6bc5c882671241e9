package reports

import (
	"math"
	"strconv"

	"gonum.org/v1/plot"
)

// The charts' axis ticks: every axis readable, ratio axes marked at 1.0.

// ratioTicks marks a ratio axis at a step of 1, 2 or 5 times a power of
// ten that gives it four to eight labels, every label with the decimals
// of the step (0.9, 1.0, 1.1; never "1.0, 1, 1.1"), and always at 1.0 (no
// difference) where the axis holds it.
type ratioTicks struct{}

// Ticks implements plot.Ticker.
func (ratioTicks) Ticks(min, max float64) []plot.Tick {
	if !(max > min) || math.IsInf(max-min, 0) {
		return plot.DefaultTicks{}.Ticks(min, max)
	}
	step := niceStep((max - min) / 8)
	decimals := max0(-int(math.Floor(math.Log10(step) + 1e-9)))
	label := func(v float64) string { return strconv.FormatFloat(v, 'f', decimals, 64) }
	var ticks []plot.Tick
	one := false
	for k := math.Ceil(min/step - 1e-9); k*step <= max+1e-9*step; k++ {
		v := k * step
		if math.Abs(v) < step*1e-9 {
			v = 0
		}
		one = one || math.Abs(v-1) < step*1e-9
		ticks = append(ticks, plot.Tick{Value: v, Label: label(v)})
	}
	if !one && min <= 1 && 1 <= max {
		ticks = append(ticks, plot.Tick{Value: 1, Label: label(1)})
	}
	return ticks
}

// niceStep is the smallest of 1, 2 and 5 times a power of ten at least
// rough.
func niceStep(rough float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(rough)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= rough*(1-1e-9) {
			return m * p
		}
	}
	return 10 * p
}

// max0 is n, or 0 for a negative n.
func max0(n int) int { return max(n, 0) }

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
