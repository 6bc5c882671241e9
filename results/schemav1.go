package results

import (
	"encoding/json"

	"github.com/dbsock/dbsock/drivers"
)

// Reading schema version 1, in which a case was TCP, Unix and the Unix
// speedups as named fields, with the further paths in a list beside them.

// summaryV1 is a case as schema version 1 wrote it (only the fields that
// version 2 moved).
type summaryV1 struct {
	TCP                  Side        `json:"tcp"`
	Unix                 Side        `json:"unix"`
	UnixSpeedupP50       float64     `json:"unix_speedup_p50"`
	UnixSpeedupMean      float64     `json:"unix_speedup_mean"`
	UnixSpeedupP50Pooled float64     `json:"unix_speedup_p50_pooled"`
	UnixSpeedupP50CI     *Interval   `json:"unix_speedup_p50_ci"`
	UnixSpeedupMeanCI    *Interval   `json:"unix_speedup_mean_ci"`
	InstanceSpeedups     []float64   `json:"instance_speedups"`
	PValue               float64     `json:"p_value"`
	PValueHolm           float64     `json:"p_value_holm"`
	VerdictKind          VerdictKind `json:"verdict_kind"`
	Verdict              string      `json:"verdict"`
	CPUSaving            *CPUSaving  `json:"cpu_saving"`
	Paths                []pathV1    `json:"paths"`
}

// pathV1 is a further path as schema version 1 wrote it.
type pathV1 struct {
	Path     drivers.Transport `json:"path"`
	Baseline drivers.Transport `json:"baseline"`
	Side
	SpeedupP50       float64     `json:"speedup_p50"`
	SpeedupP50CI     *Interval   `json:"speedup_p50_ci"`
	InstanceSpeedups []float64   `json:"instance_speedups"`
	PValue           float64     `json:"p_value"`
	PValueHolm       float64     `json:"p_value_holm"`
	VerdictKind      VerdictKind `json:"verdict_kind"`
	Verdict          string      `json:"verdict"`
	UnixGainP50      float64     `json:"unix_gain_p50"`
	UnixGainP50CI    *Interval   `json:"unix_gain_p50_ci"`
}

// fromV1 sets r's cases' sides and comparisons from raw, a schema
// version 1 report, and marks r as version 2. Version 1 compared every
// path with TCP.
func (r *Report) fromV1(raw []byte) error {
	var v1 struct {
		Summary []summaryV1 `json:"summary"`
	}
	if err := json.Unmarshal(raw, &v1); err != nil {
		return err
	}
	for i := range r.Summary {
		if i < len(v1.Summary) {
			r.Summary[i].Sides, r.Summary[i].Comparisons = v1.Summary[i].convert()
		}
	}
	r.SchemaVersion = SchemaVersion
	return nil
}

func (o summaryV1) convert() ([]PathSide, []Comparison) {
	sides := []PathSide{{Path: drivers.TCP, Side: o.TCP}, {Path: drivers.Unix, Side: o.Unix}}
	kind := o.VerdictKind
	if kind == "" {
		// Reports written before verdict_kind carry the verdict in words
		// only: judge their stored interval again.
		kind = Judge(o.UnixSpeedupP50CI, o.PValueHolm)
	}
	cmps := []Comparison{{Path: drivers.Unix, Baseline: drivers.TCP, SpeedupP50: o.UnixSpeedupP50, SpeedupP50CI: o.UnixSpeedupP50CI,
		SpeedupMean: o.UnixSpeedupMean, SpeedupMeanCI: o.UnixSpeedupMeanCI, SpeedupP50Pooled: o.UnixSpeedupP50Pooled,
		InstanceSpeedups: o.InstanceSpeedups, PValue: o.PValue, PValueHolm: o.PValueHolm, VerdictKind: kind, Verdict: o.Verdict, CPUSaving: o.CPUSaving}}
	for _, p := range o.Paths {
		base := p.Baseline
		if base == "" {
			base = drivers.TCP
		}
		sides = append(sides, PathSide{Path: p.Path, Side: p.Side})
		cmps = append(cmps, Comparison{Path: p.Path, Baseline: base, SpeedupP50: p.SpeedupP50, SpeedupP50CI: p.SpeedupP50CI,
			InstanceSpeedups: p.InstanceSpeedups, PValue: p.PValue, PValueHolm: p.PValueHolm, VerdictKind: p.VerdictKind,
			Verdict: p.Verdict, UnixGainP50: p.UnixGainP50, UnixGainP50CI: p.UnixGainP50CI})
	}
	return sides, cmps
}
