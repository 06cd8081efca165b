package capacity

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
)

// TestUnits: DynamoDB's billing rounding, which every figure of the
// capacity tests rests on.
func TestUnits(t *testing.T) {
	for _, c := range []struct {
		bytes      int
		consistent *bool
		want       float64
	}{
		{0, aws.Bool(true), 1}, {4096, aws.Bool(true), 1}, {4097, aws.Bool(true), 2},
		{4097, nil, 1}, {4096, aws.Bool(false), 0.5}, {40_000, aws.Bool(true), 10},
	} {
		if got := readUnits(c.bytes, c.consistent); got != c.want {
			t.Errorf("readUnits(%d, %v) = %v, want %v", c.bytes, aws.ToBool(c.consistent), got, c.want)
		}
	}
	for bytes, want := range map[int]float64{0: 1, 1024: 1, 1025: 2, 131_288: 129} {
		if got := writeUnits(bytes); got != want {
			t.Errorf("writeUnits(%d) = %v, want %v", bytes, got, want)
		}
	}
}
