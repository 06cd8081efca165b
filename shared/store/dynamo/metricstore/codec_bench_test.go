package metricstore

import (
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/voiceops/opsapi/shared/metrics"
	"github.com/voiceops/opsapi/shared/metrics/buckets"
	"github.com/voiceops/opsapi/shared/store/dynamo"
)

// BenchmarkItemCodec encodes a bucket of every kind into its numbers and
// decodes the item they make: a write's and a read's work per minute item.
func BenchmarkItemCodec(b *testing.B) {
	s := metrics.Scope{AccountID: "acct_a"}
	minute := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	var events []metrics.Event
	for i, k := range metrics.Kinds {
		for j := range 20 {
			events = append(events, metrics.Event{AccountID: s.AccountID, Kind: k, Value: float64(100 + 37*j + i), At: minute})
		}
	}
	bk := buckets.Aggregate(events)[0]
	b.ReportAllocs()
	for b.Loop() {
		it := item{attrMetricSK: avS(dynamo.MetricClosedKey(minute))}
		for _, n := range numbers(bk) {
			it[n.Attr] = &types.AttributeValueMemberN{Value: n.Value}
		}
		got, _, err := decodeMetricItem(s, it)
		if err != nil || got.Counts != bk.Counts {
			b.Fatal(err, got.Counts, bk.Counts)
		}
	}
}
