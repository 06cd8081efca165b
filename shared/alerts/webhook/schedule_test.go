package webhook

import (
	"math"
	"slices"
	"testing"
	"time"
)

func fixed(f float64) func() float64 { return func() float64 { return f } }

func TestParseSchedule(t *testing.T) {
	good := map[string]Schedule{
		"0s,1m,5m,15m,1h,4h": DefaultSchedule,
		" 0s , 2s,10s ":      {0, 2 * time.Second, 10 * time.Second},
		"1h30m":              {90 * time.Minute},
		"0":                  {0},
		"500ms,1.5s":         {500 * time.Millisecond, 1500 * time.Millisecond},
	}
	for in, want := range good {
		got, err := ParseSchedule(in)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("ParseSchedule(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "   ", ",", "0s,,1m", "0s,", "1m,-1s", "-0.5s", "1x", "abc", "5", "1m;5m", "0s 1m"} {
		if got, err := ParseSchedule(in); err == nil {
			t.Errorf("ParseSchedule(%q) = %v, want an error", in, got)
		}
	}
	round, err := ParseSchedule(DefaultSchedule.String())
	if err != nil || !slices.Equal(round, DefaultSchedule) {
		t.Errorf("round trip of %q = %v, %v", DefaultSchedule.String(), round, err)
	}
}

func TestNextDelayWalksTheSchedule(t *testing.T) {
	if len(DefaultSchedule) != 6 || DefaultSchedule[0] != 0 {
		t.Fatalf("DefaultSchedule = %v, want 6 attempts starting at once", DefaultSchedule)
	}
	want := []time.Duration{time.Minute, 5 * time.Minute, 15 * time.Minute, time.Hour, 4 * time.Hour}
	for attempt := 1; attempt <= 5; attempt++ {
		d, ok := DefaultSchedule.NextDelay(attempt, 0, fixed(0))
		if !ok || d != want[attempt-1] {
			t.Errorf("after attempt %d: %v, %v; want %v, true", attempt, d, ok, want[attempt-1])
		}
	}
	for _, attempt := range []int{6, 7, 0, -1} {
		if d, ok := DefaultSchedule.NextDelay(attempt, 0, fixed(0)); ok {
			t.Errorf("after attempt %d: %v, true; want the schedule spent", attempt, d)
		}
	}
	if _, ok := (Schedule{0}).NextDelay(1, 0, fixed(0)); ok {
		t.Error("a one-attempt schedule allowed a retry")
	}
}

func TestNextDelayJitter(t *testing.T) {
	step := time.Minute
	cases := []struct {
		rnd  float64
		want time.Duration
	}{
		{0, step},
		{0.5, step + 3*time.Second},
		{0.25, step + 1500*time.Millisecond},
		{math.Nextafter(1, 0), step + 6*time.Second - 1}, // just under +10%
		{1, step}, {-0.1, step}, {math.NaN(), step}, // out of contract: no jitter
	}
	for _, c := range cases {
		if d, _ := DefaultSchedule.NextDelay(1, 0, fixed(c.rnd)); d != c.want {
			t.Errorf("rnd %v: %v, want %v", c.rnd, d, c.want)
		}
	}
	// Step 0 has no jitter to add.
	if d, ok := (Schedule{0, 0}).NextDelay(1, 0, fixed(0.9)); !ok || d != 0 {
		t.Errorf("zero step: %v, %v", d, ok)
	}
	// The default source stays within bounds.
	for range 1000 {
		d, _ := DefaultSchedule.NextDelay(2, 0, nil)
		if d < 5*time.Minute || d >= 5*time.Minute+30*time.Second {
			t.Fatalf("nil rnd gave %v, want within [5m, 5m30s)", d)
		}
	}
}

func TestNextDelayRetryAfter(t *testing.T) {
	cases := []struct {
		name       string
		s          Schedule
		attempt    int
		retryAfter time.Duration
		rnd        float64
		want       time.Duration
	}{
		{"shorter never shortens", DefaultSchedule, 1, 30 * time.Second, 0, time.Minute},
		{"longer is honoured", DefaultSchedule, 1, 2 * time.Minute, 0, 2 * time.Minute},
		{"equal to the step after", DefaultSchedule, 1, 5 * time.Minute, 0, 5 * time.Minute},
		{"capped at the step after", DefaultSchedule, 1, time.Hour, 0, 5 * time.Minute},
		{"within the jitter keeps the jittered step", DefaultSchedule, 1, 62 * time.Second, 0.5, 63 * time.Second},
		{"beyond the jitter replaces it", DefaultSchedule, 1, 2 * time.Minute, 0.5, 2 * time.Minute},
		{"cap is not jittered", DefaultSchedule, 1, time.Hour, 0.9, 5 * time.Minute},
		{"later step", DefaultSchedule, 4, 2 * time.Hour, 0, 2 * time.Hour},
		{"later step capped", DefaultSchedule, 4, 9 * time.Hour, 0, 4 * time.Hour},
		{"last step is never stretched", DefaultSchedule, 5, 10 * time.Hour, 0, 4 * time.Hour},
		{"spent schedule stays spent", DefaultSchedule, 6, time.Minute, 0, 0},
		{"non-monotonic schedule caps at the larger", Schedule{0, 10 * time.Minute, time.Minute}, 1, 20 * time.Minute, 0, 10 * time.Minute},
	}
	for _, c := range cases {
		d, ok := c.s.NextDelay(c.attempt, c.retryAfter, fixed(c.rnd))
		if d != c.want || ok != (c.want > 0) {
			t.Errorf("%s: %v, %v; want %v", c.name, d, ok, c.want)
		}
	}
}
