// Package latency summarizes timed trials the same way for every
// benchmark of the time to notify (scripts/notifybench, the stack's
// TestTimeToNotify): n, p50, p99, min and max, where a p99 is printed
// only over enough trials for it to differ from the maximum's meaning.
package latency

import (
	"fmt"
	"math"
	"slices"
	"time"
)

// MinP99 is the fewest trials whose 99th percentile is reported as a
// p99: below it the figure is only the largest of a few, said as such.
const MinP99 = 25

// Quantile is the nearest-rank quantile q of the durations (unsorted).
func Quantile(d []time.Duration, q float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(d))
	k := int(math.Ceil(q*float64(len(s)))) - 1
	return s[min(max(k, 0), len(s)-1)]
}

// Summary is "n 50, p50 …, p99 …, min …, max …" rounded to the
// millisecond; with fewer than MinP99 trials the p99 is replaced by
// "p99 n/a (max of n)". No trials: "n 0".
func Summary(d []time.Duration) string {
	if len(d) == 0 {
		return "n 0"
	}
	r := func(x time.Duration) time.Duration { return x.Round(time.Millisecond) }
	p99 := "p99 " + r(Quantile(d, 0.99)).String()
	if len(d) < MinP99 {
		p99 = fmt.Sprintf("p99 n/a (max of %d)", len(d))
	}
	return fmt.Sprintf("n %d, p50 %v, %s, min %v, max %v", len(d), r(Quantile(d, 0.5)), p99, r(slices.Min(d)), r(slices.Max(d)))
}
