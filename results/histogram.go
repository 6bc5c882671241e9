package results

import (
	"encoding/base64"
	"fmt"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Histogram bounds: 1 ns to one minute at three significant digits
// (0.1% resolution), about 200 KiB per histogram.
const (
	LowestNs   = 1
	HighestNs  = int64(time.Minute)
	SigFigures = 3
)

// NewHistogram returns an empty latency histogram in nanoseconds.
func NewHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(LowestNs, HighestNs, SigFigures)
}

// LatencyOf reads the distribution of h.
func LatencyOf(h *hdrhistogram.Histogram) Latency {
	if h.TotalCount() == 0 {
		return Latency{}
	}
	return Latency{
		Min:    h.Min(),
		P50:    h.ValueAtQuantile(50),
		P90:    h.ValueAtQuantile(90),
		P99:    h.ValueAtQuantile(99),
		P999:   h.ValueAtQuantile(99.9),
		Max:    h.Max(),
		Mean:   h.Mean(),
		StdDev: h.StdDev(),
	}
}

// EncodeHistogram encodes h for Run.Histogram.
func EncodeHistogram(h *hdrhistogram.Histogram) (string, error) {
	b, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		return "", fmt.Errorf("encode histogram: %w", err)
	}
	return base64.StdEncoding.EncodeToString(b), nil
}

// DecodeHistogram decodes Run.Histogram.
func DecodeHistogram(s string) (*hdrhistogram.Histogram, error) {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("decode histogram: %w", err)
	}
	h, err := hdrhistogram.Decode(b)
	if err != nil {
		return nil, fmt.Errorf("decode histogram: %w", err)
	}
	return h, nil
}
