package reports

import (
	"math"
	"slices"
	"strconv"
)

// Units that fit the numbers: a latency axis and a latency in words are
// in ns, µs, ms or s, whichever keeps the figures between 1 and 10,000
// (never "128974.8 µs").

// latUnit is a unit of latency: its name and its size in nanoseconds.
type latUnit struct {
	name string
	ns   float64
}

var latUnits = []latUnit{{"ns", 1}, {"µs", 1e3}, {"ms", 1e6}, {"s", 1e9}}

// axisUnit is the unit of an axis from bottom to top nanoseconds: the
// largest in which bottom is at least 1, or larger while top would reach
// 10,000 in it.
func axisUnit(bottom, top float64) latUnit {
	i := 0
	for i+1 < len(latUnits) && bottom/latUnits[i+1].ns >= 1 {
		i++
	}
	for i+1 < len(latUnits) && top/latUnits[i].ns >= 1e4 {
		i++
	}
	return latUnits[i]
}

// fmtLatency is ns in the unit that fits it, to three figures: "950 ns",
// "18.7 µs", "129 ms".
func fmtLatency(ns float64) string {
	if !(ns > 0) || math.IsInf(ns, 0) {
		return "–"
	}
	u := latUnits[0]
	for _, c := range latUnits[1:] {
		if ns >= c.ns {
			u = c
		}
	}
	v := ns / u.ns
	prec := 2 - int(math.Floor(math.Log10(v)))
	return strconv.FormatFloat(v, 'f', max(prec, 0), 64) + " " + u.name
}

// rateAxis labels the offered rates of an axis in one unit, the one that
// fits its highest: "2k/s, 4k/s, 16k/s", never "2000/s, 16k/s".
func rateAxis(rates []float64) []string {
	top := slices.Max(rates)
	unit, name := 1.0, ""
	switch {
	case top >= 1e6:
		unit, name = 1e6, "M"
	case top >= 1e4:
		unit, name = 1e3, "k"
	}
	out := make([]string, len(rates))
	for i, v := range rates {
		out[i] = strconv.FormatFloat(v/unit, 'g', 3, 64) + name + "/s"
	}
	return out
}
