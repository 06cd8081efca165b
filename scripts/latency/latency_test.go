package latency

import (
	"strings"
	"testing"
	"time"
)

func ms(v ...int) []time.Duration {
	var d []time.Duration
	for _, x := range v {
		d = append(d, time.Duration(x)*time.Millisecond)
	}
	return d
}

// A p99 is named only over MinP99 trials or more; below, the largest is
// said to be the max of n, never a p99.
func TestSummaryNamesAP99OnlyOverEnoughTrials(t *testing.T) {
	few := ms(900, 300, 500)
	if got, want := Summary(few), "n 3, p50 500ms, p99 n/a (max of 3), min 300ms, max 900ms"; got != want {
		t.Errorf("Summary = %q, want %q", got, want)
	}
	var many []time.Duration
	for i := 1; i <= 100; i++ {
		many = append(many, time.Duration(i)*10*time.Millisecond)
	}
	if got, want := Summary(many), "n 100, p50 500ms, p99 990ms, min 10ms, max 1s"; got != want {
		t.Errorf("Summary = %q, want %q", got, want)
	}
	if got := Summary(nil); got != "n 0" {
		t.Errorf("Summary(nil) = %q", got)
	}
	if got := Summary(many[:MinP99-1]); got[len(got)-len("max 240ms"):] != "max 240ms" || !strings.Contains(got, "max of 24") {
		t.Errorf("24 trials: %q", got)
	}
}

// Quantile is nearest-rank and does not reorder its input.
func TestQuantileNearestRank(t *testing.T) {
	d := ms(40, 10, 30, 20)
	if q := Quantile(d, 0.5); q != 20*time.Millisecond {
		t.Errorf("p50 = %v", q)
	}
	if q := Quantile(d, 0.99); q != 40*time.Millisecond {
		t.Errorf("p99 = %v", q)
	}
	if d[0] != 40*time.Millisecond {
		t.Errorf("input reordered: %v", d)
	}
}
