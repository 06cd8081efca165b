package metricstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/metrics"
	"github.com/voiceops/opsapi/shared/metrics/buckets"
	"github.com/voiceops/opsapi/shared/store/dynamo"
	"github.com/voiceops/opsapi/shared/store/dynamo/metricstore"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// TestMetricCountsReadBackAsAPIErrors: an api_error written by the lean
// writer (shared/store/dynamo, no sketches) reads back through the metric store
// like a recorded event: the two writers share one item layout.
func TestMetricCountsReadBackAsAPIErrors(t *testing.T) {
	db := client(t)
	table := newTable(t, db)
	now := time.Now().UTC()
	c := dynamo.NewMetricCounts(db, table)
	if err := c.APIError(context.Background(), "acct_m", "proj_m", now); err != nil {
		t.Fatal(err)
	}
	if err := c.APIError(context.Background(), "acct_m", "", now); err != nil {
		t.Fatal(err)
	}
	m := metricstore.New(db, table)
	for scope, want := range map[metrics.Scope]int64{{AccountID: "acct_m"}: 2, {AccountID: "acct_m", ProjectID: "proj_m"}: 1} {
		bs, err := m.ReadBuckets(context.Background(), scope, now.Add(-time.Hour), now.Add(time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		sum := buckets.Summarize(bs, now.Add(-time.Hour), now.Add(time.Minute))
		if v, _ := sum.Value(voiceops.MetricAPIErrors); v != want || sum.Counts.Of(metrics.Activity) != want {
			t.Errorf("%v: api_errors %d activity %d, want %d", scope, v, sum.Counts.Of(metrics.Activity), want)
		}
	}
}

// TestTouchIsInvisibleToReaders: the item Touch writes (to wake the stream)
// adds no activity: the scope stays no_data.
func TestTouchIsInvisibleToReaders(t *testing.T) {
	db := client(t)
	table := newTable(t, db)
	now := time.Now().UTC()
	if err := dynamo.NewMetricCounts(db, table).Touch(context.Background(), "acct_t", "proj_t", now); err != nil {
		t.Fatal(err)
	}
	scope := metrics.Scope{AccountID: "acct_t", ProjectID: "proj_t"}
	bs, err := metricstore.New(db, table).ReadBuckets(context.Background(), scope, now.Add(-time.Hour), now.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if len(bs) != 0 {
		t.Fatalf("%d buckets, want none (a touch is never read)", len(bs))
	}
	if sum := buckets.Summarize(bs, now.Add(-time.Hour), now.Add(time.Minute)); sum.Active() {
		t.Errorf("a touch counts as activity: %+v", sum.Counts)
	}
}
