package pipeline

import (
	"cmp"
	"fmt"
	"math"
	"time"

	"github.com/dbsock/dbsock/internal/setting"
	"github.com/dbsock/dbsock/scenarios"
)

// MinBlockOpsAtRate is the fewest ops a block may give each path at a
// rate. A block's reached rate is its ops over its span, and its span
// ends with its last op, not an interval after it: with k ops a block
// reads up to k/(k-1) of the rate it kept (one op, timed alone, reads as
// one over its latency). With 100 the figure is within about 1%, the
// tolerance of the test of whether the generator fell behind
// (results.MinAchieved).
const MinBlockOpsAtRate = 100

// validateCases checks the loop's settings, and every case with them at
// each rate it is offered: its own, or, under RateAuto, each rate the
// search may reach (searchSteps), so that a search that cannot run is
// refused before anything starts, as a list of rates is.
func (p Plan) validateCases() error {
	if err := p.Loop.Validate(); err != nil {
		return err
	}
	for _, c := range p.cases() {
		rates := []float64{c.Offered}
		if p.RateAuto {
			rates = searchSteps()
		}
		for _, r := range rates {
			c.Offered = r
			err := p.validateCase(c)
			if err != nil && p.RateAuto {
				return setting.Err("%s auto (a search of rates from %d ops/s up, doubling): %w", setting.Rate, SearchStart, err)
			}
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// validateCase checks case c with the loop's settings for it, and, at a
// rate, that each of its blocks holds enough ops to read the rate it
// reached (MinBlockOpsAtRate).
func (p Plan) validateCase(c scenarios.Case) error {
	s := p.Loop.For(c)
	if err := s.Validate(); err != nil {
		return err
	}
	if err := s.ValidateCase(c); err != nil {
		return err
	}
	if s.Rate <= 0 {
		return nil
	}
	blocks := cmp.Or(s.Blocks, scenarios.DefaultBlocks)
	if s.Duration > 0 {
		per := s.Rate * s.Duration.Seconds() / float64(blocks)
		if per >= MinBlockOpsAtRate {
			return nil
		}
		need := time.Duration(math.Ceil(MinBlockOpsAtRate * float64(blocks) / s.Rate * 1e9))
		return setting.Err("%s %s at %s %g gives each path %.3g %s in each of its %d blocks: %s; lengthen %s to %s or more, raise %s or lower %s",
			setting.Duration, s.Duration, setting.Rate, s.Rate, per, ops(per == 1), blocks, tooFewWords(), setting.Duration, need.Round(time.Millisecond), setting.Rate, setting.Blocks)
	}
	if per := s.N / blocks; per < MinBlockOpsAtRate {
		return setting.Err("%s %d at %s %g gives each path %d %s in each of its %d blocks: %s; raise %s to %d or more, or lower %s",
			setting.N, s.N, setting.Rate, s.Rate, per, ops(per == 1), blocks, tooFewWords(), setting.N, MinBlockOpsAtRate*blocks, setting.Blocks)
	}
	return nil
}

// tooFewWords says why a block at a rate needs MinBlockOpsAtRate ops.
func tooFewWords() string {
	return fmt.Sprintf("the rate a block reached is read from %d ops or more (with fewer, its span ends too soon after its last op, and the rate reads high)", MinBlockOpsAtRate)
}

// ops is "op" for one, "ops" for another count.
func ops(one bool) string {
	if one {
		return "op"
	}
	return "ops"
}
