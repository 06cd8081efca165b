package metricstore_test

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/voiceops/opsapi/shared/metrics"
	"github.com/voiceops/opsapi/shared/metrics/buckets"
	"github.com/voiceops/opsapi/shared/metrics/series"
	"github.com/voiceops/opsapi/shared/store/dynamo"
	"github.com/voiceops/opsapi/shared/store/dynamo/metricstore"
	"github.com/voiceops/opsapi/shared/testsupport/awstest"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// itemsDB counts the items DynamoDB returns to Query.
type itemsDB struct {
	metricstore.DB
	mu    sync.Mutex
	items int
	calls int
}

func (c *itemsDB) Query(ctx context.Context, in *dynamodb.QueryInput, o ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	out, err := c.DB.Query(ctx, in, o...)
	if err == nil {
		c.mu.Lock()
		c.items += len(out.Items)
		c.calls++
		c.mu.Unlock()
	}
	return out, err
}

func (c *itemsDB) take() (items, calls int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	items, calls = c.items, c.calls
	c.items, c.calls = 0, 0
	return items, calls
}

// seedWeek stores a busy project's week as it would be kept: one item per
// minute for 7 days (a minute's writes compacted into one item, as the
// metric layout intends; dated TTLs ignored so the baseline can read
// them all), turn latencies and API errors every minute, and the hourly
// roll-ups of the final hours.
func seedWeek(b *testing.B, c *dynamodb.Client, table string, s metrics.Scope, now time.Time) {
	b.Helper()
	ctx := context.Background()
	from := now.Add(-7 * 24 * time.Hour).Truncate(time.Hour)
	var writes []types.WriteRequest
	flush := func() {
		for len(writes) > 0 {
			n := min(len(writes), 25)
			if _, err := c.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{table: writes[:n]}}); err != nil {
				b.Fatal(err)
			}
			writes = writes[n:]
		}
	}
	var hours []buckets.Bucket
	for h := from; h.Before(now); h = h.Add(time.Hour) {
		var hour []buckets.Bucket
		for m := h; m.Before(h.Add(time.Hour)) && m.Before(now); m = m.Add(time.Minute) {
			events := []metrics.Event{metrics.Count(metrics.APIErrors, s.AccountID, s.ProjectID, m)}
			for i := range 5 {
				events = append(events, metrics.Event{AccountID: s.AccountID, ProjectID: s.ProjectID, Kind: metrics.TurnLatency, Value: float64(300 + 100*i), At: m})
			}
			for _, bk := range buckets.Aggregate(events) {
				if bk.Scope != s {
					continue
				}
				hour = append(hour, bk)
				it := metricItem(b, bk)
				writes = append(writes, types.WriteRequest{PutRequest: &types.PutRequest{Item: it}})
			}
		}
		if h.Add(time.Hour).Before(series.LastFinalHour(now)) || h.Add(time.Hour).Equal(series.LastFinalHour(now)) {
			sum := buckets.Summarize(hour, h, h.Add(time.Hour))
			hours = append(hours, buckets.Bucket{Scope: s, Minute: h, Counts: sum.Counts, Latency: sum.Latency})
		}
	}
	flush()
	if err := metricstore.NewRollups(c, table).PutHours(ctx, hours); err != nil {
		b.Fatal(err)
	}
}

// metricItem is a closed minute's item with a TTL far ahead (the baseline reads a
// week of minutes, which the table keeps 48 hours).
func metricItem(b *testing.B, bk buckets.Bucket) map[string]types.AttributeValue {
	b.Helper()
	enc, err := buckets.EncodeSketch(bk.Latency)
	if err != nil {
		b.Fatal(err)
	}
	n := func(v int64) types.AttributeValue {
		return &types.AttributeValueMemberN{Value: strconv.FormatInt(v, 10)}
	}
	return map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: metricstore.Partition(bk.Scope)}, "sk": &types.AttributeValueMemberS{Value: dynamo.MetricClosedKey(bk.Minute)},
		"expires_at": n(bk.Minute.Add(30 * 24 * time.Hour).Unix()), "activity": n(bk.Counts.Of(metrics.Activity)),
		"turns": n(bk.Counts.Of(metrics.TurnLatency)), "api_errors": n(bk.Counts.Of(metrics.APIErrors)),
		dynamo.MetricAttrLatency: &types.AttributeValueMemberB{Value: enc},
	}
}

// BenchmarkSeriesWeek reads a week of one project's p95 turn latency in
// hourly steps on moto: through the roll-ups (GET /v1/metrics) against
// reading the week's raw minute buckets; and previews a rule over 24 h.
// Each reports the DynamoDB items read per operation.
//
//	go test ./shared/store/dynamo/metricstore -run '^$' -bench SeriesWeek -count 5
func BenchmarkSeriesWeek(b *testing.B) {
	cl := awstest.DynamoDB(b)
	table := awstest.Tables(b, cl).Metrics
	now := time.Now().UTC()
	s := metrics.Scope{AccountID: "acct_bench", ProjectID: "proj_bench"}
	seedWeek(b, cl, table, s, now)
	db := &itemsDB{DB: cl}
	reader := &series.Reader{Minutes: metricstore.New(db, table), Hours: metricstore.NewRollups(db, table), Now: func() time.Time { return now }}
	from, to := series.Align(now.Add(-7*24*time.Hour), now, time.Hour)
	ctx := context.Background()
	b.Run("rollups", func(b *testing.B) {
		for b.Loop() {
			pts, err := reader.Read(ctx, series.Query{Scope: s, Metric: voiceops.MetricTurnLatencyP95, From: from, To: to, Step: time.Hour})
			if err != nil || len(pts) != 168 && len(pts) != 169 {
				b.Fatalf("%d points, %v", len(pts), err)
			}
		}
		items, _ := db.take()
		b.ReportMetric(float64(items)/float64(b.N), "items/op")
	})
	b.Run("raw-minutes", func(b *testing.B) {
		for b.Loop() {
			bs, err := reader.Minutes.ReadBuckets(ctx, s, from, to)
			if err != nil || len(bs) < 1440 {
				b.Fatalf("%d buckets, %v", len(bs), err)
			}
			for h := from; h.Before(to); h = h.Add(time.Hour) {
				buckets.Summarize(bs, h, h.Add(time.Hour)).Value(voiceops.MetricTurnLatencyP95)
			}
		}
		items, _ := db.take()
		b.ReportMetric(float64(items)/float64(b.N), "items/op")
	})
	b.Run("preview-24h", func(b *testing.B) {
		pid := s.ProjectID
		rule := voiceops.NewRule("ar_bench", s.AccountID, voiceops.RuleInput{Name: "p95", ProjectID: &pid, Metric: voiceops.MetricTurnLatencyP95,
			Operator: voiceops.OpGreater, Threshold: 650, Window: voiceops.Window10m}, now)
		pf, pt := now.Truncate(time.Minute).Add(-24*time.Hour), now.Truncate(time.Minute)
		for b.Loop() {
			res, err := reader.Preview(ctx, rule, pf, pt)
			if err != nil || len(res.Points) != 1440 {
				b.Fatalf("%d points, %v", len(res.Points), err)
			}
		}
		items, _ := db.take()
		b.ReportMetric(float64(items)/float64(b.N), "items/op")
	})
}
