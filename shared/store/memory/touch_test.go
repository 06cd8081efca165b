package memory

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/metrics"
)

// TestTouchNotifiesAndStoresNothing: a touch wakes the listener with its
// scope, like the metrics table's stream on a touch item, and readers see
// no data.
func TestTouchNotifiesAndStoresNothing(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 22, 10, 0, 30, 0, time.UTC)
	m := NewMetrics()
	m.Now = func() time.Time { return now }
	if err := m.Touch(ctx, "acct_a", "proj_a1", now); err != nil { // no listener yet: nothing to wake
		t.Fatal(err)
	}
	var got []metrics.Scope
	m.OnAdd(func(s []metrics.Scope) { got = append(got, s...) })
	if err := m.Touch(ctx, "acct_a", "", now); err != nil {
		t.Fatal(err)
	}
	if want := []metrics.Scope{{AccountID: "acct_a"}}; !slices.Equal(got, want) {
		t.Errorf("notified %v, want %v", got, want)
	}
	bs, err := m.ReadBuckets(ctx, metrics.Scope{AccountID: "acct_a", ProjectID: "proj_a1"}, now.Add(-time.Hour), now.Add(time.Minute))
	if err != nil || len(bs) != 0 {
		t.Errorf("buckets after touches: %v %v, want none", bs, err)
	}
}
