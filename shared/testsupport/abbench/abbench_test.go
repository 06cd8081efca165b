package abbench

import (
	"testing"
	"time"
)

func TestQuantile(t *testing.T) {
	vs := []float64{5, 1, 4, 2, 3}
	if Quantile(vs, 0.25) != 2 || Quantile(vs, 0.5) != 3 || Quantile(vs, 0.75) != 4 || Quantile(nil, 0.5) != 0 {
		t.Errorf("quantiles of %v: %v %v %v", vs, Quantile(vs, 0.25), Quantile(vs, 0.5), Quantile(vs, 0.75))
	}
	if vs[0] != 5 {
		t.Error("Quantile sorted its argument")
	}
}

// TestRunInterleaves: the work and the baseline alternate their order
// round by round, and each runs once per round.
func TestRunInterleaves(t *testing.T) {
	var order []byte
	res := testing.Benchmark(func(b *testing.B) {
		order = order[:0]
		Run(b, func() { order = append(order, 'a'); time.Sleep(time.Microsecond) }, func() { order = append(order, 'b') })
	})
	if len(order) < 4 || string(order[:4]) != "abba" {
		t.Fatalf("order %.20s", order)
	}
	for i := 0; i+1 < len(order); i += 2 {
		if order[i] == order[i+1] {
			t.Fatalf("round %d ran %c twice: %s", i/2, order[i], order)
		}
	}
	if r := res.Extra["rounds"]; int(r)*2 != len(order) {
		t.Errorf("rounds %v for %d calls", r, len(order))
	}
	for _, m := range []string{"a-ms", "base-ms", "x-base-p25", "x-base-p50", "x-base-p75"} {
		if _, ok := res.Extra[m]; !ok {
			t.Errorf("no %s reported: %v", m, res.Extra)
		}
	}
}
