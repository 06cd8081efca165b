package metricstore_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/voiceops/opsapi/shared/metrics"
	"github.com/voiceops/opsapi/shared/metrics/buckets"
	"github.com/voiceops/opsapi/shared/platform/tables"
	"github.com/voiceops/opsapi/shared/store/dynamo"
	"github.com/voiceops/opsapi/shared/store/dynamo/metricstore"
	"github.com/voiceops/opsapi/shared/store/storetest"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// TestEveryKindThroughCompaction: every kind's count, written into the
// shards of an open minute, is summed into the closed item when the minute
// is compacted, under the kind's attribute, and read back from it (the
// contract's EveryKind covers the shards and the closed items written
// directly; this covers the compaction, which only a clock can reach).
func TestEveryKindThroughCompaction(t *testing.T) {
	c := client(t)
	table := newTable(t, c)
	minute := metrics.Minute(time.Now()).Add(-20 * time.Minute)
	now := minute.Add(time.Second)
	clock := func() time.Time { return now }
	s := newMetricScope()
	events, want := storetest.EveryKind(s, minute)
	rec := &buckets.Recorder{Store: metricstore.NewWithClock(c, table, clock)}
	for _, e := range events { // one write each: they spread over the shards
		if err := rec.Record(t.Context(), e); err != nil {
			t.Fatal(err)
		}
	}
	now = minute.Add(dynamo.MetricClosedAfter + time.Second)
	for _, what := range []string{"the read that compacts", "a read of the compacted item"} {
		got, err := metricstore.NewWithClock(c, table, clock).ReadBuckets(t.Context(), s, minute, minute.Add(time.Minute))
		if err != nil || len(got) != 1 {
			t.Fatalf("%s: %v, %v", what, got, err)
		}
		for _, k := range voiceops.MetricKinds {
			if got[0].Counts.Of(k) != want.Of(k) {
				t.Errorf("%s: %s count %d, want %d", what, k, got[0].Counts.Of(k), want.Of(k))
			}
		}
	}
	compacted := false
	for _, it := range rawItems(t, c, table, metricstore.Partition(s)) {
		if !strings.HasPrefix(it[tables.SK].(*types.AttributeValueMemberS).Value, "C#") {
			continue
		}
		_, compacted = it[dynamo.MetricAttrCompacted]
		for _, k := range voiceops.MetricKinds {
			n, _ := it[dynamo.MetricCountAttr(k)].(*types.AttributeValueMemberN)
			if n == nil || n.Value != strconv.FormatInt(want.Of(k), 10) {
				t.Errorf("closed item: %s = %v, want %d", dynamo.MetricCountAttr(k), it[dynamo.MetricCountAttr(k)], want.Of(k))
			}
		}
	}
	if !compacted {
		t.Error("the minute was not compacted")
	}
}
