package results

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"io"
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

// DecodeHistogram decodes Run.Histogram. A histogram of another geometry
// than dbsock's (NewHistogram) is refused before it is decoded: a wide one
// would take memory and time out of all proportion (CheckHistogram).
func DecodeHistogram(s string) (*hdrhistogram.Histogram, error) {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("decode histogram: %w", err)
	}
	if err := checkGeometry(b); err != nil {
		return nil, err
	}
	h, err := hdrhistogram.Decode(b)
	if err != nil {
		return nil, fmt.Errorf("decode histogram: %w", err)
	}
	return h, nil
}

// HistogramGeometry says the one geometry dbsock writes and reads, for
// messages and docs.
var HistogramGeometry = fmt.Sprintf("%d ns to %d s at %d significant digits", LowestNs, HighestNs/int64(time.Second), SigFigures)

// CheckHistogram reads the header of s, a Run.Histogram, and refuses any
// geometry but dbsock's, without decoding the counts.
func CheckHistogram(s string) error {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return fmt.Errorf("decode histogram: %w", err)
	}
	return checkGeometry(b)
}

// checkGeometry reads the geometry in the header of b, a histogram in
// hdrhistogram's V2 compressed encoding (base64, as hdrhistogram.Decode
// takes it): an 8-byte header, then zlib over a 40-byte header (cookie,
// payload length, index offset, significant digits, lowest and highest
// trackable values, conversion ratio) and the counts. Only that header is
// inflated.
func checkGeometry(b []byte) error {
	raw := make([]byte, base64.StdEncoding.DecodedLen(len(b)))
	n, err := base64.StdEncoding.Decode(raw, b)
	if err != nil {
		return fmt.Errorf("decode histogram: %w", err)
	}
	raw = raw[:n]
	if len(raw) < 8 || int32(binary.BigEndian.Uint32(raw))&^0xf0 != hdrhistogram.V2CompressedEncodingCookieBase {
		return fmt.Errorf("decode histogram: not a histogram in HdrHistogram's V2 compressed encoding")
	}
	z, err := zlib.NewReader(bytes.NewReader(raw[8:]))
	if err != nil {
		return fmt.Errorf("decode histogram: %w", err)
	}
	defer z.Close()
	var head [40]byte
	if _, err := io.ReadFull(z, head[:]); err != nil {
		return fmt.Errorf("decode histogram: its header: %w", err)
	}
	digits := int32(binary.BigEndian.Uint32(head[12:]))
	lowest := int64(binary.BigEndian.Uint64(head[16:]))
	highest := int64(binary.BigEndian.Uint64(head[24:]))
	// hdrhistogram reads a lowest value below 1 as 1.
	if max(lowest, 1) != LowestNs || highest != HighestNs || digits != SigFigures {
		return fmt.Errorf("a histogram of %d ns to %d ns at %d significant digits: dbsock reads only its own, %s (a wider one would take memory and time out of all proportion)",
			lowest, highest, digits, HistogramGeometry)
	}
	return nil
}
