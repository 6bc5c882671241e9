package results

import (
	"bytes"
	"strings"
	"testing"
)

// FuzzReadJSON feeds arbitrary bytes to the saved-results reader: it must
// return an error or a report, never panic, and a report it accepts must
// survive Summarize (which decodes every histogram).
func FuzzReadJSON(f *testing.F) {
	f.Add([]byte(`{"schema_version": 1}`))
	f.Add([]byte(`{"schema_version": 1, "runs": [{"target": "x", "transport": "tcp", "round": 1, "histogram": "!!"}]}`))
	f.Add([]byte(`{"schema_version": 2}`))
	f.Add([]byte(`[]`))
	h := NewHistogram()
	_ = h.RecordValue(1000)
	enc, _ := EncodeHistogram(h)
	f.Add([]byte(`{"schema_version": 1, "runs": [{"target": "x", "transport": "unix", "round": 1, "n": 1, "histogram": "` + enc + `"}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := ReadJSON(bytes.NewReader(b))
		if err != nil {
			return
		}
		if err := r.Summarize(); err != nil && !strings.Contains(err.Error(), "histogram") {
			t.Fatalf("unexpected Summarize error: %v", err)
		}
	})
}
