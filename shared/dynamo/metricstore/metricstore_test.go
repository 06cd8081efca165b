package metricstore_test

import (
	"context"
	"errors"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"

	"github.com/voiceops/opsapi/shared/buckets"
	"github.com/voiceops/opsapi/shared/dynamo/metricstore"
	"github.com/voiceops/opsapi/shared/metrics"
	"github.com/voiceops/opsapi/shared/series"
	"github.com/voiceops/opsapi/shared/storetest"
	"github.com/voiceops/opsapi/shared/tables"
	"github.com/voiceops/opsapi/shared/testsupport/awstest"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// client returns a client of the emulator's DynamoDB (awstest).
func client(t *testing.T) *dynamodb.Client { return awstest.DynamoDB(t) }

// newTable creates a fresh set of tables, deleted when the test ends, and
// returns the metrics table's name.
func newTable(t *testing.T, c *dynamodb.Client) string { return awstest.Tables(t, c).Metrics }

func TestMetricsContract(t *testing.T) {
	c := client(t)
	// Every subtest uses fresh random scopes, so one table serves them all.
	table := newTable(t, c)
	storetest.RunMetrics(t, func(*testing.T) buckets.Store { return metricstore.New(c, table) })
}

// countingMetricsDB counts calls and can cut every Query page short, to
// make DynamoDB paginate.
type countingMetricsDB struct {
	metricstore.DB
	pageSize int32
	mu       sync.Mutex
	batches  []int // items per BatchWriteItem call
	queries  int
}

func (c *countingMetricsDB) BatchWriteItem(ctx context.Context, in *dynamodb.BatchWriteItemInput, o ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error) {
	c.mu.Lock()
	n := 0
	for _, ws := range in.RequestItems {
		n += len(ws)
	}
	c.batches = append(c.batches, n)
	c.mu.Unlock()
	return c.DB.BatchWriteItem(ctx, in, o...)
}

func (c *countingMetricsDB) Query(ctx context.Context, in *dynamodb.QueryInput, o ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	c.mu.Lock()
	c.queries++
	c.mu.Unlock()
	if c.pageSize > 0 {
		in.Limit = aws.Int32(c.pageSize)
	}
	return c.DB.Query(ctx, in, o...)
}

func (c *countingMetricsDB) take() (batches []int, queries int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	batches, queries = c.batches, c.queries
	c.batches, c.queries = nil, 0
	return batches, queries
}

// rawItems returns every item of a partition of the metrics table.
func rawItems(t *testing.T, c *dynamodb.Client, table, pk string) []map[string]types.AttributeValue {
	t.Helper()
	out, err := c.Query(t.Context(), &dynamodb.QueryInput{
		TableName:                 aws.String(table),
		KeyConditionExpression:    aws.String("#pk = :pk"),
		ExpressionAttributeNames:  map[string]string{"#pk": tables.PK},
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: pk}},
		ConsistentRead:            aws.Bool(true),
	})
	if err != nil {
		t.Fatalf("Query %s: %v", pk, err)
	}
	return out.Items
}

func newMetricScope() metrics.Scope {
	return metrics.Scope{AccountID: voiceops.NewID(voiceops.PrefixAccount), ProjectID: voiceops.NewID(voiceops.PrefixProject)}
}

// TestMetricsItems checks the layout of the table: a partition per scope,
// a new item per write of a minute, the TTL, counts as numbers, the sketch
// as binary.
func TestMetricsItems(t *testing.T) {
	c := client(t)
	table := newTable(t, c)
	st := metricstore.New(c, table)
	r := &buckets.Recorder{Store: st}
	s := newMetricScope()
	minute := metrics.Minute(time.Now()).Add(-10 * time.Minute)
	for range 2 { // two writes of the same minute: two items
		err := r.Record(t.Context(),
			metrics.Event{AccountID: s.AccountID, ProjectID: s.ProjectID, Kind: metrics.TurnLatency, Value: 420, At: minute.Add(5 * time.Second)},
			metrics.Count(metrics.APIErrors, s.AccountID, s.ProjectID, minute.Add(10*time.Second)))
		if err != nil {
			t.Fatal(err)
		}
	}
	sk := regexp.MustCompile(`^` + strconv.FormatInt(minute.Unix(), 10) + `#[0-9A-Za-z]+$`)
	for _, pk := range []string{"M#" + s.AccountID, "M#" + s.AccountID + "#" + s.ProjectID} {
		items := rawItems(t, c, table, pk)
		if len(items) != 2 {
			t.Fatalf("%s: %d items, want 2 (one per write)", pk, len(items))
		}
		for _, it := range items {
			if v := it[tables.SK].(*types.AttributeValueMemberS).Value; !sk.MatchString(v) {
				t.Errorf("%s: sort key %q does not match %s", pk, v, sk)
			}
			if v, _ := it[tables.TTL].(*types.AttributeValueMemberN); v == nil || v.Value != strconv.FormatInt(minute.Add(voiceops.MetricMinuteRetention).Unix(), 10) {
				t.Errorf("%s: %s = %v, want the minute + 48 h", pk, tables.TTL, it[tables.TTL])
			}
			for name, want := range map[string]string{"activity": "2", "turns": "1", "api_errors": "1"} {
				if v, _ := it[name].(*types.AttributeValueMemberN); v == nil || v.Value != want {
					t.Errorf("%s: %s = %v, want %s", pk, name, it[name], want)
				}
			}
			if _, ok := it["call_volume"]; ok {
				t.Errorf("%s: a zero count is stored", pk)
			}
			if b, _ := it["latency"].(*types.AttributeValueMemberB); b == nil || len(b.Value) == 0 {
				t.Errorf("%s: latency = %T, want a binary sketch", pk, it["latency"])
			}
		}
	}
	got, err := st.ReadBuckets(t.Context(), s, minute, minute.Add(time.Minute))
	if err != nil || len(got) != 1 || got[0].Counts != (buckets.Counts{Activity: 4, Turns: 2, APIErrors: 2}) {
		t.Errorf("ReadBuckets merging two items: %+v, %v", got, err)
	}
}

// TestMetricsCallBudget: 25 items per BatchWriteItem, one Query per scope
// read (its pages aside), pages followed.
func TestMetricsCallBudget(t *testing.T) {
	c := client(t)
	table := newTable(t, c)
	db := &countingMetricsDB{DB: c}
	st := metricstore.New(db, table)
	s := newMetricScope()
	base := metrics.Minute(time.Now()).Add(-60 * time.Minute)
	events := make([]metrics.Event, 0, 60)
	for i := range 30 {
		// 30 minutes x (account + project) = 60 buckets.
		events = append(events, metrics.Count(metrics.CallVolume, s.AccountID, s.ProjectID, base.Add(time.Duration(i)*time.Minute)))
	}
	if err := (&buckets.Recorder{Store: st}).Record(t.Context(), events...); err != nil {
		t.Fatal(err)
	}
	batches, queries := db.take()
	if len(batches) != 3 || batches[0] != 25 || batches[1] != 25 || batches[2] != 10 || queries != 0 {
		t.Errorf("writing 60 buckets: batches %v, queries %d; want [25 25 10] and none", batches, queries)
	}
	got, err := st.ReadBuckets(t.Context(), s, base, base.Add(time.Hour))
	if err != nil || len(got) != 30 {
		t.Fatalf("ReadBuckets: %d buckets, %v", len(got), err)
	}
	if batches, queries := db.take(); queries != 1 || len(batches) != 0 {
		t.Errorf("reading a scope: %d queries, batches %v; want 1 query", queries, batches)
	}
	if got, _ := st.ReadBuckets(t.Context(), s, base, base); len(got) != 0 {
		t.Errorf("empty range: %d buckets", len(got))
	}
	if _, queries := db.take(); queries != 0 {
		t.Errorf("an empty range made %d queries", queries)
	}

	db.pageSize = 7 // 30 items: pages of 7, 7, 7, 7, 2
	got, err = st.ReadBuckets(t.Context(), s, base, base.Add(time.Hour))
	if err != nil || len(got) != 30 {
		t.Fatalf("paginated ReadBuckets: %d buckets, %v", len(got), err)
	}
	if _, queries := db.take(); queries < 5 {
		t.Errorf("pages of 7 over 30 items: %d Query calls, want at least 5", queries)
	}
	for i, b := range got {
		if !b.Minute.Equal(base.Add(time.Duration(i)*time.Minute)) || b.Counts.CallVolume != 1 {
			t.Errorf("bucket %d: %v %+v", i, b.Minute, b.Counts)
		}
	}
}

// TestMetricsExpiredItemsIgnored: DynamoDB deletes expired items up to days
// late, so reads skip them.
func TestMetricsExpiredItemsIgnored(t *testing.T) {
	c := client(t)
	table := newTable(t, c)
	st := metricstore.New(c, table)
	s := newMetricScope()
	minute := metrics.Minute(time.Now()).Add(-5 * time.Minute)
	put := func(expires time.Time, volume int) {
		t.Helper()
		_, err := c.PutItem(t.Context(), &dynamodb.PutItemInput{TableName: aws.String(table), Item: map[string]types.AttributeValue{
			tables.PK:     &types.AttributeValueMemberS{Value: metricstore.Partition(s)},
			tables.SK:     &types.AttributeValueMemberS{Value: strconv.FormatInt(minute.Unix(), 10) + "#" + voiceops.RandomBase62(8)},
			tables.TTL:    &types.AttributeValueMemberN{Value: strconv.FormatInt(expires.Unix(), 10)},
			"activity":    &types.AttributeValueMemberN{Value: strconv.Itoa(volume)},
			"call_volume": &types.AttributeValueMemberN{Value: strconv.Itoa(volume)},
		}})
		if err != nil {
			t.Fatal(err)
		}
	}
	put(time.Now().Add(-time.Second), 100)
	put(time.Now().Add(time.Hour), 3)
	got, err := st.ReadBuckets(t.Context(), s, minute, minute.Add(time.Minute))
	if err != nil || len(got) != 1 || got[0].Counts.CallVolume != 3 {
		t.Errorf("ReadBuckets: %+v, %v; want the live item only (call_volume 3)", got, err)
	}
}

func TestMetricsCorruptItemIsInternalError(t *testing.T) {
	c := client(t)
	table := newTable(t, c)
	st := metricstore.New(c, table)
	s := newMetricScope()
	minute := metrics.Minute(time.Now()).Add(-5 * time.Minute)
	_, err := c.PutItem(t.Context(), &dynamodb.PutItemInput{TableName: aws.String(table), Item: map[string]types.AttributeValue{
		tables.PK: &types.AttributeValueMemberS{Value: metricstore.Partition(s)},
		tables.SK: &types.AttributeValueMemberS{Value: strconv.FormatInt(minute.Unix(), 10) + "#x"},
		"latency": &types.AttributeValueMemberB{Value: []byte("not a sketch")},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.ReadBuckets(t.Context(), s, minute, minute.Add(time.Minute)); err == nil || voiceops.KindOf(err) != voiceops.KindInternal {
		t.Errorf("ReadBuckets over a corrupt item: %v, want an internal error", err)
	}
}

// fakeMetricsDB answers BatchWriteItem from a script and records what it
// was sent; it needs no DynamoDB.
type fakeMetricsDB struct {
	mu          sync.Mutex
	unprocessed int // how many calls leave their last item unprocessed; -1: every call
	err         error
	written     map[string]bool // sort keys
	calls       int
}

func (f *fakeMetricsDB) BatchWriteItem(_ context.Context, in *dynamodb.BatchWriteItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	if f.err != nil {
		return nil, f.err
	}
	if f.written == nil {
		f.written = map[string]bool{}
	}
	out := &dynamodb.BatchWriteItemOutput{UnprocessedItems: map[string][]types.WriteRequest{}}
	for table, ws := range in.RequestItems {
		if f.unprocessed != 0 {
			if f.unprocessed > 0 {
				f.unprocessed--
			}
			out.UnprocessedItems[table] = ws[len(ws)-1:]
			ws = ws[:len(ws)-1]
		}
		for _, w := range ws {
			f.written[w.PutRequest.Item[tables.SK].(*types.AttributeValueMemberS).Value] = true
		}
	}
	return out, nil
}

func (f *fakeMetricsDB) Query(context.Context, *dynamodb.QueryInput, ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	return nil, f.err
}

func someBuckets(n int) []buckets.Bucket {
	base := metrics.Minute(time.Now()).Add(-time.Hour)
	events := make([]metrics.Event, n)
	for i := range events {
		events[i] = metrics.Count(metrics.APIErrors, "acct_fake", "", base.Add(time.Duration(i)*time.Minute))
	}
	return buckets.Aggregate(events)
}

func TestMetricsUnprocessedItemsAreRetried(t *testing.T) {
	f := &fakeMetricsDB{unprocessed: 3}
	if err := metricstore.New(f, "m").AddBuckets(t.Context(), someBuckets(30)); err != nil {
		t.Fatal(err)
	}
	if len(f.written) != 30 || f.calls != 2+3 {
		t.Errorf("%d items written in %d calls; want 30 in 5 (2 batches + 3 retries)", len(f.written), f.calls)
	}

	f = &fakeMetricsDB{unprocessed: -1}
	err := metricstore.New(f, "m").AddBuckets(t.Context(), someBuckets(3))
	if err == nil || voiceops.KindOf(err) != voiceops.KindInternal {
		t.Errorf("items never processed: %v, want an internal error", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	f = &fakeMetricsDB{unprocessed: -1}
	if err := metricstore.New(f, "m").AddBuckets(ctx, someBuckets(3)); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled while retrying: %v", err)
	}
}

func TestMetricsSDKErrorsAreInternal(t *testing.T) {
	throttled := &smithy.GenericAPIError{Code: "ProvisionedThroughputExceededException", Message: "table voiceops-us-metrics"}
	st := metricstore.New(&fakeMetricsDB{err: throttled}, "m")
	errAdd := st.AddBuckets(t.Context(), someBuckets(1))
	_, errRead := st.ReadBuckets(t.Context(), metrics.Scope{AccountID: "acct_fake"}, time.Now().Add(-time.Hour), time.Now())
	for name, err := range map[string]error{"AddBuckets": errAdd, "ReadBuckets": errRead} {
		var de *voiceops.Error
		if !errors.Is(err, throttled) || errors.As(err, &de) || voiceops.KindOf(err) != voiceops.KindInternal {
			t.Errorf("%s: %v, want an internal error wrapping the SDK error", name, err)
		}
	}
}

func TestPartition(t *testing.T) {
	if got := metricstore.Partition(metrics.Scope{AccountID: "acct_a"}); got != "M#acct_a" {
		t.Errorf("account scope: %q", got)
	}
	if got := metricstore.Partition(metrics.Scope{AccountID: "acct_a", ProjectID: "proj_1"}); got != "M#acct_a#proj_1" {
		t.Errorf("project scope: %q", got)
	}
}

func TestRollupsContract(t *testing.T) {
	c := client(t)
	table := newTable(t, c)
	storetest.RunRollups(t, func(*testing.T) (buckets.Store, series.HourStore) {
		return metricstore.New(c, table), metricstore.NewRollups(c, table)
	})
}
