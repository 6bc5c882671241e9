package scenarios

import (
	"fmt"
	"math"
	"time"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/internal/setting"
)

// Limits of a case's settings, checked by Settings.Validate and
// Settings.ValidateCase; the words of their errors, and of whoever words
// the same limits for a person (AcceptedDuration, AcceptedPrecision,
// AcceptedRate), are built from them.
const (
	MaxN           = 1_000_000_000
	MaxRounds      = 1000
	MaxBlocks      = 10_000
	MaxConcurrency = 4096
	MaxRows        = 100_000_000 // a zipfian keyspace's constant is summed over every row before timing
	MaxRate        = 10_000_000
	// MaxOpInterval is the longest wait between one worker's ops that an
	// open loop (Rate) may ask for.
	MaxOpInterval = time.Hour
	// Duration (when set) and MaxDuration last at most MaxCaseDuration;
	// Duration at least MinDuration, MaxDuration at least MinMaxDuration.
	MinDuration     = time.Millisecond
	MinMaxDuration  = time.Second
	MaxCaseDuration = 24 * time.Hour
	// OpTimeout (when set) is MinOpTimeout to MaxOpTimeout.
	MinOpTimeout = 10 * time.Millisecond
	MaxOpTimeout = time.Hour
	// Precision (when set) is a share from MinPrecision to MaxPrecision.
	MinPrecision = 0.001
	MaxPrecision = 0.5
	// MaxMixPart bounds each side of a Mix (R and W of mixed:R/W).
	MaxMixPart = 1_000_000
	// MinPaths is how many paths a case measures at least: one to compare
	// with the other.
	MinPaths = 2
)

// AcceptedDuration words what Duration accepts: "1ms to 24h".
func AcceptedDuration() string { return durationWords(MinDuration, MaxCaseDuration) }

// AcceptedPrecision words what Precision accepts: "a share from 0.1% to
// 50%, such as 3% or 0.03".
func AcceptedPrecision() string {
	return fmt.Sprintf("a share from %g%% to %g%%, such as 3%% or 0.03", MinPrecision*100, MaxPrecision*100)
}

// AcceptedRate words what Rate accepts: "more than 0 up to 10000000
// ops/s".
func AcceptedRate() string { return fmt.Sprintf("more than 0 up to %d ops/s", MaxRate) }

// Validate checks that the settings can run: every setting in its range
// (the keys and the mix by the rules ParseKeys and ParseOp read them
// with) and no two that contradict each other. Its errors name the fields
// (setting.N); dbsock run words them as its flags. ValidateCase checks a
// case with them.
func (o Settings) Validate() error {
	for _, check := range []func() error{o.validateSize, o.validateEnd, o.validateRate, o.validateOp, o.Keys.validate} {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

// ValidateCase checks that case c can run with these settings: its own
// values in range (Validate checks the settings), and none that
// contradicts them.
func (o Settings) ValidateCase(c Case) error {
	for _, check := range []func(Case) error{o.validateCaseSize, o.validateLoop, o.validateCaseOp} {
		if err := check(c); err != nil {
			return err
		}
	}
	return nil
}

func intRange(f setting.Field, v, lo, hi int) error {
	if v < lo || v > hi {
		return setting.Err("%s %d is out of range; accepted: %d to %d", f, v, lo, hi)
	}
	return nil
}

func durationRange(f setting.Field, v, lo, hi time.Duration) error {
	if v < lo || v > hi {
		return setting.Err("%s %s is out of range; accepted: %s", f, v, durationWords(lo, hi))
	}
	return nil
}

// durationWords words the range lo to hi: "1ms to 24h".
func durationWords(lo, hi time.Duration) string {
	return shortDuration(lo) + " to " + shortDuration(hi)
}

// shortDuration prints 24h0m0s as 24h and 1m0s as 1m.
func shortDuration(d time.Duration) string {
	switch {
	case d >= time.Hour && d%time.Hour == 0:
		return d.String()[:len(d.String())-4]
	case d >= time.Minute && d%time.Minute == 0 && d < time.Hour:
		return d.String()[:len(d.String())-2]
	}
	return d.String()
}

// validateSize checks how many ops, rounds and blocks a case runs.
func (o Settings) validateSize() error {
	if o.Duration == 0 {
		if err := intRange(setting.N, o.N, 1, MaxN); err != nil {
			return err
		}
	} else if err := durationRange(setting.Duration, o.Duration, MinDuration, MaxCaseDuration); err != nil {
		return err
	}
	for _, c := range []struct {
		f      setting.Field
		v, max int
		min    int
	}{{setting.Warmup, o.Warmup, MaxN, 0}, {setting.Rounds, o.Rounds, MaxRounds, 1}, {setting.Blocks, o.Blocks, MaxBlocks, 0}} {
		if err := intRange(c.f, c.v, c.min, c.max); err != nil {
			return err
		}
	}
	if o.Duration == 0 && o.Blocks > o.N {
		return setting.Err("%s %d is more than %s %d: a round's ops are split into blocks of at least one op; lower %s to at most %d or raise %s",
			setting.Blocks, o.Blocks, setting.N, o.N, setting.Blocks, o.N, setting.N)
	}
	return nil
}

// validateEnd checks what ends a case and a connection: Precision and
// MaxDuration, OpTimeout.
func (o Settings) validateEnd() error {
	if o.Precision != 0 {
		if !(o.Precision >= MinPrecision && o.Precision <= MaxPrecision) {
			return setting.Err("%s %.4g%% is not %s", setting.Precision, o.Precision*100, AcceptedPrecision())
		}
		if err := durationRange(setting.MaxDuration, o.MaxDuration, MinMaxDuration, MaxCaseDuration); err != nil {
			return err
		}
	} else if o.MaxDuration != 0 {
		return setting.Err("%s bounds %s; give %s too (e.g. 3%%)", setting.MaxDuration, setting.Precision, setting.Precision)
	}
	if o.OpTimeout != 0 {
		return durationRange(setting.OpTimeout, o.OpTimeout, MinOpTimeout, MaxOpTimeout)
	}
	return nil
}

// validateCaseSize checks a case's workers and rows.
func (o Settings) validateCaseSize(c Case) error {
	if err := intRange(setting.Concurrency, c.Concurrency, 0, MaxConcurrency); err != nil {
		return err
	}
	return intRange(setting.Rows, c.Rows, 0, MaxRows)
}

// validateRate checks the open loop's rate.
func (o Settings) validateRate() error {
	if o.Rate != 0 && (!(o.Rate > 0 && o.Rate <= MaxRate) || math.IsNaN(o.Rate)) {
		return setting.Err("%s %g is out of range; accepted: %s", setting.Rate, o.Rate, AcceptedRate())
	}
	return nil
}

// validateLoop checks the case's scenario, and the open loop's rate with
// its workers.
func (o Settings) validateLoop(c Case) error {
	if c.Scenario != "" && c.Scenario != PK && c.Scenario != Connect {
		return setting.Err("%s %q is not accepted; use one of: %s, %s", setting.Scenario, c.Scenario, PK, Connect)
	}
	if b := o.blocks(); o.Duration == 0 && o.N < b*c.workers() {
		return setting.Err("%s %d is split among the %s %d workers in each of %d blocks, which leaves some worker no op: raise %s to at least %d or lower %s",
			setting.N, o.N, setting.Concurrency, c.workers(), b, setting.N, b*c.workers(), setting.Concurrency)
	}
	if o.Rate == 0 {
		return nil
	}
	if c.Scenario == Connect {
		return setting.Err("%s runs the %s scenario open loop; it does not apply to %s %s", setting.Rate, PK, setting.Scenario, c.Scenario)
	}
	interval := float64(c.workers()) / o.Rate // seconds between one worker's ops
	if interval > MaxOpInterval.Seconds() {
		return setting.Err("%s %g with %d worker(s) leaves %.3gs between one worker's ops, more than %s; raise %s",
			setting.Rate, o.Rate, c.workers(), interval, shortDuration(MaxOpInterval), setting.Rate)
	}
	if o.Duration > 0 {
		block := o.Duration / time.Duration(o.blocks())
		if interval > block.Seconds() {
			return setting.Err("%s %g leaves %.3gs between one worker's ops, longer than each of the %d blocks of %s %s (%s): raise %s, lengthen %s or lower %s",
				setting.Rate, o.Rate, interval, o.blocks(), setting.Duration, o.Duration, block, setting.Rate, setting.Duration, setting.Blocks)
		}
	}
	return nil
}

// validateOp checks what each op does.
func (o Settings) validateOp() error {
	switch o.Op {
	case "", drivers.OpRead, drivers.OpUpdate:
		return nil
	case drivers.OpMixed:
	default:
		return setting.Err("%s %q is not accepted; use %s, %s or %s", setting.Op, o.Op, drivers.OpRead, drivers.OpUpdate, drivers.OpMixed)
	}
	if !o.Mix.valid() {
		return setting.Err("%s %s needs a mix of reads and writes, both 1 to %d (Mix %+v)", setting.Op, o.Op, MaxMixPart, o.Mix)
	}
	return nil
}

// validateCaseOp checks what each op does against the case: a mix of
// reads and writes draws its rows and keeps its connections.
func (o Settings) validateCaseOp(c Case) error {
	if o.Op != drivers.OpMixed {
		return nil
	}
	if c.Rows <= 0 {
		return setting.Err("%s %s draws which ops write with their keys; give the case its rows (%s)", setting.Op, o.Op, setting.Rows)
	}
	if c.Scenario == Connect {
		return setting.Err("%s %s times reads and writes on kept connections (%s %s); %s opens one per op", setting.Op, o.Op, setting.Scenario, PK, c.Scenario)
	}
	return nil
}
