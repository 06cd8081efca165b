package httpapi

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/voiceops"
)

// TestTimeAsFormat: Time and AppendTime write what time's Format writes
// with voiceops.TimeFormat, in UTC, for any instant and zone.
func TestTimeAsFormat(t *testing.T) {
	zones := []*time.Location{time.UTC, time.FixedZone("E", 5*3600+1800), time.FixedZone("W", -11*3600)}
	times := []time.Time{{}, time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(999, 12, 31, 23, 59, 59, 999999999, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC), time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(-5, 3, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2026, 2, 28, 23, 30, 0, 1_000_000, time.UTC), time.Now()}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		times = append(times, time.Unix(rng.Int64N(1<<36)-(1<<35), rng.Int64N(1e9)))
	}
	for _, at := range times {
		for _, z := range zones {
			at := at.In(z)
			want := at.UTC().Format(voiceops.TimeFormat)
			if got := Time(at); got != want {
				t.Fatalf("Time(%v) = %s, want %s", at, got, want)
			}
			if got := string(AppendTime([]byte("x"), at)); got != "x"+want {
				t.Fatalf("AppendTime(%v) = %s, want x%s", at, got, want)
			}
		}
	}
}
