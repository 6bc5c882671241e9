package dbsock

import (
	"errors"
	"fmt"
	"math"

	"github.com/dbsock/dbsock/results"
)

// Comparison is one path of a case against its baseline, TCP on 127.0.0.1:
// the p50 speedup with its interval and verdict (Summary.ComparisonOf).
type Comparison = results.Comparison

// Interval is a speedup's 95% interval: Lo to Hi around Center.
type Interval = results.Interval

// AtLeast is the gate for a test that states the least effect worth
// having: it returns nil when every case of rep measured the Unix socket
// at least min times as fast as TCP at the p50 with 95% confidence, that
// is, when the low end of each case's interval (SpeedupP50CI.Lo) is at
// least min. 1.05 asks for 5% faster. A gate on Lo > 1 only says the socket
// is faster by some amount, however small: a speedup of 1.014× (1.004–1.052)
// passes it, and fails AtLeast(rep, 1.05).
//
// Its error names each case that falls short with what was measured, and
// a report that holds nothing to judge (nil, no case, no interval: a test
// that was skipped or a Compare that failed) is an error too, so that a
// gate cannot pass having measured nothing.
func AtLeast(rep *Report, min float64) error {
	if math.IsNaN(min) || math.IsInf(min, 0) || min <= 0 {
		return fmt.Errorf("dbsock.AtLeast: the least speedup must be a number above 0 (1.05 asks for 5%% faster), not %v", min)
	}
	if rep == nil || len(rep.Summary) == 0 {
		return errors.New("dbsock.AtLeast: the report has no case, so nothing shows a speedup: was nothing measured (a skipped test, a Compare that failed)?")
	}
	var errs []error
	for i := range rep.Summary {
		s := &rep.Summary[i]
		name := s.Target
		if len(rep.Summary) > 1 {
			name += " (" + s.Label() + ")"
		}
		c := s.ComparisonOf(Unix)
		switch {
		case c == nil || c.SpeedupP50CI == nil:
			errs = append(errs, fmt.Errorf("%s: no interval for the Unix socket's p50 speedup over TCP (every op failed on a path, or too few block pairs), so nothing shows it is at least %.3g×", name, min))
		case c.SpeedupP50CI.Lo < min:
			ci := c.SpeedupP50CI
			errs = append(errs, fmt.Errorf("%s: the Unix socket's p50 speedup over TCP is %.3f× (%.3f–%.3f, 95%%): the interval's low end %.3f is under the least asked, %.3g×",
				name, c.SpeedupP50, ci.Lo, ci.Hi, ci.Lo, min))
		}
	}
	return errors.Join(errs...)
}
