package webhook

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
)

// Schedule holds the delays of a delivery's attempts, attempt 1 first. Entry i
// is how long attempt i+1 waits: the first entry counts from the event, every
// later one from the failure of the attempt before it.
type Schedule []time.Duration

// DefaultSchedule is the contract's: at once, then after 1 min, 5 min, 15 min,
// 1 h and 4 h; 6 attempts in all.
var DefaultSchedule = Schedule{0, time.Minute, 5 * time.Minute, 15 * time.Minute, time.Hour, 4 * time.Hour}

// JitterFraction is the most jitter NextDelay adds, as a fraction of the step.
const JitterFraction = 0.1

// ParseSchedule parses a comma-separated list of Go durations such as
// "0s,1m,5m" (the dev server's -retry-schedule flag). It refuses an empty
// list, empty entries, negative delays and anything time.ParseDuration
// refuses.
func ParseSchedule(s string) (Schedule, error) {
	if strings.TrimSpace(s) == "" {
		return nil, errors.New("retry schedule: empty; want a list like 0s,1m,5m")
	}
	parts := strings.Split(s, ",")
	out := make(Schedule, 0, len(parts))
	for i, p := range parts {
		p = strings.TrimSpace(p)
		if p == "" {
			return nil, fmt.Errorf("retry schedule: entry %d is empty", i+1)
		}
		d, err := time.ParseDuration(p)
		if err != nil {
			return nil, fmt.Errorf("retry schedule: entry %d: %q is not a duration like 30s or 5m", i+1, p)
		}
		if d < 0 {
			return nil, fmt.Errorf("retry schedule: entry %d: %q is negative", i+1, p)
		}
		out = append(out, d)
	}
	return out, nil
}

// String formats s the way ParseSchedule reads it.
func (s Schedule) String() string {
	parts := make([]string, len(s))
	for i, d := range s {
		parts[i] = d.String()
	}
	return strings.Join(parts, ",")
}

// NextDelay returns how long to wait, after attempt number attempt (1-based)
// failed, before the next attempt; false when the schedule is spent (or
// attempt is not a real attempt number).
//
// The delay is the next step plus jitter: rnd()*JitterFraction of the step,
// rnd returning a value in [0, 1) (math/rand/v2.Float64 when nil).
//
// Retry-After ("429, honouring Retry-After up to the next step"): the
// receiver's Retry-After can only lengthen the wait, and only up to the step
// after the next one. That is, when retryAfter is longer than the jittered
// step, the delay becomes min(retryAfter, the step after it), or the step
// itself when no step follows, so the schedule's last and longest wait is
// never stretched. A Retry-After never shortens a wait and never adds
// attempts, and the total time a delivery may take stays bounded by the
// schedule.
func (s Schedule) NextDelay(attempt int, retryAfter time.Duration, rnd func() float64) (time.Duration, bool) {
	if attempt < 1 || attempt >= len(s) {
		return 0, false
	}
	step := s[attempt]
	if rnd == nil {
		rnd = rand.Float64
	}
	f := rnd()
	if !(f >= 0 && f < 1) { // out of contract, or NaN: no jitter
		f = 0
	}
	d := step + time.Duration(float64(step)*JitterFraction*f)
	if retryAfter > d {
		limit := step
		if attempt+1 < len(s) {
			limit = max(s[attempt+1], step)
		}
		d = max(d, min(retryAfter, limit))
	}
	return d, true
}
