package reports

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/results"
)

// HgrmTicks is how many percentile steps per halving of the distance to
// 100% the .hgrm files list (wrk2 and HdrHistogram's own tools use 5).
const HgrmTicks = 5

// HgrmScale divides nanoseconds into the unit of the .hgrm files:
// microseconds.
const HgrmScale = 1000

// Hgrm renders each case and transport's pooled histogram in HdrHistogram's
// percentile-distribution text format (what wrk2 prints and HdrHistogram's
// plotter reads), with hdrhistogram-go's own PercentilesPrint; values are
// in microseconds. It returns file name -> contents, one file per case and
// transport: TARGET[-CASE]-TRANSPORT.hgrm.
func Hgrm(r *results.Report) (map[string][]byte, error) {
	out := map[string][]byte{}
	for _, s := range r.Summary {
		for _, side := range s.Sides { // every path of the case
			t := side.Path
			h, err := results.Pooled(r, s.Case, t)
			if err != nil {
				return nil, err
			}
			if h.TotalCount() == 0 {
				continue
			}
			var buf bytes.Buffer
			if _, err := h.PercentilesPrint(&buf, HgrmTicks, HgrmScale); err != nil {
				return nil, err
			}
			out[hgrmName(r, s.Case, t)] = buf.Bytes()
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no histogram to write: the report has no complete results")
	}
	return out, nil
}

// hgrmName names a case's file: the target alone for a plain run, with the
// case's short label when the report holds several cases per target.
func hgrmName(r *results.Report, c results.Case, t drivers.Transport) string {
	name := caseName(r, c)
	name = strings.NewReplacer(" ", "-", "/", "_", "@", "at-").Replace(name)
	return filepath.Clean(name + "-" + string(t) + ".hgrm")
}
