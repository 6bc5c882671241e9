package pipeline

import (
	"strings"

	"github.com/agnivade/levenshtein"
)

// DidYouMean is " (did you mean X?)" when typed is within two edits of one
// of known (the nearest, ignoring case) or a prefix of it, as cobra
// suggests a mistyped command; "" when nothing known is that near.
func DidYouMean(typed string, known []string) string {
	t := strings.ToLower(strings.TrimSpace(typed))
	if t == "" {
		return ""
	}
	best, dist := "", 3
	for _, k := range known {
		if strings.EqualFold(k, typed) && k != typed {
			return " (did you mean " + k + "?)"
		}
		d := levenshtein.ComputeDistance(t, strings.ToLower(k))
		if strings.HasPrefix(strings.ToLower(k), t) && d > 0 {
			d = min(d, 2)
		}
		if d > 0 && d < dist {
			best, dist = k, d
		}
	}
	if best == "" {
		return ""
	}
	return " (did you mean " + best + "?)"
}
