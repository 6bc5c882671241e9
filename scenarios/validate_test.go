package scenarios

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/dbsock/dbsock/drivers"
)

// TestLimitsWordedFromTheirConstants: each limit is checked by its
// constant, and the words of its error, as of dbsock run's usage errors
// (AcceptedDuration, AcceptedPrecision, AcceptedRate), come from it; a
// value at the edge passes. Keys and mixes are checked by the rules their
// flags are read with, so that no Settings holds what --keys and --op
// refuse.
func TestLimitsWordedFromTheirConstants(t *testing.T) {
	base := Settings{N: 10, Rounds: 1}
	with := func(f func(*Settings)) Settings { s := base; f(&s); return s }
	for _, c := range []struct {
		name string
		s    Settings
		want string
	}{
		{"precision", with(func(s *Settings) { s.Precision, s.MaxDuration = MaxPrecision*1.01, time.Minute }), AcceptedPrecision()},
		{"duration", with(func(s *Settings) { s.Duration = MaxCaseDuration + time.Second }), "accepted: " + AcceptedDuration()},
		{"max duration", with(func(s *Settings) { s.Precision, s.MaxDuration = MinPrecision, MinMaxDuration/2 }), "accepted: " + durationWords(MinMaxDuration, MaxCaseDuration)},
		{"op timeout", with(func(s *Settings) { s.OpTimeout = MinOpTimeout / 2 }), "accepted: " + durationWords(MinOpTimeout, MaxOpTimeout)},
		{"rate", with(func(s *Settings) { s.Rate = MaxRate * 2 }), "accepted: " + AcceptedRate()},
		{"mix", with(func(s *Settings) { s.Op, s.Mix = drivers.OpMixed, Mix{MaxMixPart + 1, 1} }), fmt.Sprintf("both 1 to %d", MaxMixPart)},
		{"zipf", with(func(s *Settings) { s.Keys = Keys{Dist: Zipf, Theta: 1} }), "zipf constant outside (0, 1)"},
		{"stray theta", with(func(s *Settings) { s.Keys = Keys{Dist: Uniform, Theta: 0.5} }), "does not take"},
	} {
		err := c.s.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %q", c.name, err, c.want)
		}
	}
	edge := with(func(s *Settings) {
		s.Precision, s.MaxDuration, s.OpTimeout = MinPrecision, MaxCaseDuration, MaxOpTimeout
		s.Op, s.Mix, s.Keys = drivers.OpMixed, Mix{MaxMixPart, MaxMixPart}, Keys{Dist: Hotspot, Hot: 0.2, Ops: 0.8}
	})
	if err := edge.Validate(); err != nil {
		t.Errorf("settings at the limits: %v", err)
	}
	if err := with(func(s *Settings) { s.Duration, s.N = MinDuration, 0 }).Validate(); err != nil {
		t.Errorf("the shortest duration: %v", err)
	}
	if _, _, err := ParseOp(fmt.Sprintf("mixed:%d/1", MaxMixPart+1)); err == nil {
		t.Errorf("--op mixed:%d/1 was read", MaxMixPart+1)
	}
	for got, want := range map[string]string{AcceptedDuration(): "1ms to 24h", AcceptedPrecision(): "a share from 0.1% to 50%, such as 3% or 0.03",
		AcceptedRate(): "more than 0 up to 10000000 ops/s"} {
		if got != want {
			t.Errorf("worded %q, want %q", got, want)
		}
	}
}
