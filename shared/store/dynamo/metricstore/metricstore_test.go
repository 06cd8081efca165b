package metricstore_test

import (
	"context"
	"errors"
	"math"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"

	"github.com/voiceops/opsapi/shared/metrics"
	"github.com/voiceops/opsapi/shared/metrics/buckets"
	"github.com/voiceops/opsapi/shared/metrics/series"
	"github.com/voiceops/opsapi/shared/platform/tables"
	"github.com/voiceops/opsapi/shared/store/dynamo"
	"github.com/voiceops/opsapi/shared/store/dynamo/metricstore"
	"github.com/voiceops/opsapi/shared/store/storetest"
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
	db := awstest.Serial(c)
	storetest.RunMetrics(t, func(*testing.T) buckets.Store { return metricstore.New(db, table) })
}

// countingMetricsDB counts calls and can cut every Query page short, to
// make DynamoDB paginate.
type countingMetricsDB struct {
	metricstore.DB
	pageSize int32
	mu       sync.Mutex
	updates  int
	puts     int
	queries  int
}

func (c *countingMetricsDB) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, o ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	c.mu.Lock()
	c.updates++
	c.mu.Unlock()
	return c.DB.UpdateItem(ctx, in, o...)
}

func (c *countingMetricsDB) PutItem(ctx context.Context, in *dynamodb.PutItemInput, o ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	c.mu.Lock()
	c.puts++
	c.mu.Unlock()
	return c.DB.PutItem(ctx, in, o...)
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

func (c *countingMetricsDB) take() (updates, puts, queries int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	updates, puts, queries = c.updates, c.puts, c.queries
	c.updates, c.puts, c.queries = 0, 0, 0
	return updates, puts, queries
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

// TestMetricsItems checks the layout of the table (metriclayout.go): a
// partition per scope; writes of the current minute add into one of its
// shards, writes of an earlier minute into its closed item; the TTL;
// counts and latency bins as numbers.
func TestMetricsItems(t *testing.T) {
	c := client(t)
	table := newTable(t, c)
	now := metrics.Minute(time.Now()).Add(10 * time.Second)
	st := metricstore.NewWithClock(c, table, func() time.Time { return now })
	r := &buckets.Recorder{Store: st}
	s := newMetricScope()
	current, late := metrics.Minute(now), metrics.Minute(now).Add(-10*time.Minute)
	for _, minute := range []time.Time{current, late} {
		for range 20 { // 20 writes of a minute: at most 4 shards, or its closed item
			err := r.Record(t.Context(),
				metrics.Event{AccountID: s.AccountID, ProjectID: s.ProjectID, Kind: metrics.TurnLatency, Value: 420, At: minute.Add(5 * time.Second)},
				metrics.Count(metrics.APIErrors, s.AccountID, s.ProjectID, minute.Add(6*time.Second)))
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	shard := regexp.MustCompile(`^` + strconv.FormatInt(current.Unix(), 10) + `#[0-3]$`)
	closed := "C#" + strconv.FormatInt(late.Unix(), 10)
	for _, pk := range []string{"M#" + s.AccountID, "M#" + s.AccountID + "#" + s.ProjectID} {
		items := rawItems(t, c, table, pk)
		if len(items) < 2 || len(items) > 1+dynamo.MetricShards {
			t.Fatalf("%s: %d items, want the closed one and 1 to %d shards", pk, len(items), dynamo.MetricShards)
		}
		var sum int64
		for _, it := range items {
			sk := it[tables.SK].(*types.AttributeValueMemberS).Value
			minute := current
			if sk == closed {
				minute = late
			} else if !shard.MatchString(sk) {
				t.Errorf("%s: sort key %q is neither %s nor %s", pk, sk, shard, closed)
			}
			if v, _ := it[tables.TTL].(*types.AttributeValueMemberN); v == nil || v.Value != strconv.FormatInt(minute.Add(voiceops.MetricMinuteRetention).Unix(), 10) {
				t.Errorf("%s %s: %s = %v, want the minute + 48 h", pk, sk, tables.TTL, it[tables.TTL])
			}
			if _, ok := it["call_volume"]; ok {
				t.Errorf("%s: a zero count is stored", pk)
			}
			turns, _ := strconv.ParseInt(it["turns"].(*types.AttributeValueMemberN).Value, 10, 64)
			bins := 0
			for name, v := range it {
				if _, _, ok := dynamo.MetricBin(name); ok {
					bins++
					if n := v.(*types.AttributeValueMemberN).Value; n != strconv.FormatInt(turns, 10) {
						t.Errorf("%s %s: bin %s = %s, want the %d turns (one latency)", pk, sk, name, n, turns)
					}
				}
			}
			if bins != 1 {
				t.Errorf("%s %s: %d bins, want 1", pk, sk, bins)
			}
			if sk == closed && turns != 20 {
				t.Errorf("%s %s: %d turns, want 20", pk, sk, turns)
			}
			if sk != closed {
				sum += turns
			}
		}
		if sum != 20 {
			t.Errorf("%s: the shards hold %d turns, want 20", pk, sum)
		}
	}
	got, err := st.ReadBuckets(t.Context(), s, late, current.Add(time.Minute))
	want := buckets.NewCounts(map[metrics.Kind]int64{metrics.Activity: 40, metrics.TurnLatency: 20, metrics.APIErrors: 20})
	if err != nil || len(got) != 2 || got[0].Counts != want || got[1].Counts != want {
		t.Errorf("ReadBuckets: %+v, %v; want two minutes of %+v", got, err, want)
	}
}

// TestMetricsCompaction: a closed minute's shards are summed once into its
// closed item, by the first read that finds the minute closed; later reads
// read that one item and no shard of the minute, late writes add into it,
// and the counts and sketches never change on the way.
func TestMetricsCompaction(t *testing.T) {
	c := client(t)
	table := newTable(t, c)
	db := &countingMetricsDB{DB: awstest.Serial(c)}
	start := metrics.Minute(time.Now()).Add(-20 * time.Minute)
	now := start
	clock := func() time.Time { return now }
	st := metricstore.NewWithClock(db, table, clock)
	other := metricstore.NewWithClock(db, table, clock) // a second reader
	rec := &buckets.Recorder{Store: st}
	s := newMetricScope()
	// Ten minutes of 30 writes each, every write recorded in its own minute.
	var all []metrics.Event
	for m := range 10 {
		for i := range 30 {
			now = start.Add(time.Duration(m)*time.Minute + time.Duration(i)*time.Second)
			e := metrics.Event{AccountID: s.AccountID, ProjectID: s.ProjectID, Kind: metrics.TurnLatency, Value: float64(100 + 37*i + m), At: now}
			all = append(all, e)
			if err := rec.Record(t.Context(), e); err != nil {
				t.Fatal(err)
			}
		}
	}
	db.take()
	wantBuckets := func(what string, got []buckets.Bucket) {
		t.Helper()
		want := buckets.Aggregate(all)
		var mine []buckets.Bucket
		for _, b := range want {
			if b.Scope == s {
				mine = append(mine, b)
			}
		}
		if len(got) != len(mine) {
			t.Fatalf("%s: %d buckets, want %d", what, len(got), len(mine))
		}
		for i := range got {
			ge, _ := buckets.EncodeSketch(got[i].Latency)
			we, _ := buckets.EncodeSketch(mine[i].Latency)
			if !got[i].Minute.Equal(mine[i].Minute) || got[i].Counts != mine[i].Counts || string(ge) != string(we) {
				t.Errorf("%s: bucket %d: %v %+v, want %v %+v (or another sketch)", what, i, got[i].Minute, got[i].Counts, mine[i].Minute, mine[i].Counts)
			}
		}
	}
	from, to := start, start.Add(11*time.Minute)
	now = start.Add(9*time.Minute + 40*time.Second) // minutes 0 to 7 are closed
	got, err := st.ReadBuckets(t.Context(), s, from, to)
	if err != nil {
		t.Fatal(err)
	}
	wantBuckets("first read", got)
	if u, p, q := db.take(); q != 2 || p != 8 || u != 0 {
		t.Errorf("first read: %d queries, %d puts, %d updates; want 2 queries (closed items, every shard: this store has not read the scope yet) and 8 compactions", q, p, u)
	}
	closedItems := 0
	for _, it := range rawItems(t, c, table, metricstore.Partition(s)) {
		if sk := it[tables.SK].(*types.AttributeValueMemberS).Value; strings.HasPrefix(sk, "C#") {
			closedItems++
		}
	}
	if closedItems != 8 {
		t.Errorf("%d closed items, want 8", closedItems)
	}
	// Counting what a read of a store that read the scope before returns:
	// the closed items, the shards of the minutes from the last closed (7)
	// on.
	counting := &itemCountingDB{DB: c}
	warm := metricstore.NewWithClock(counting, table, clock)
	if _, err := warm.ReadBuckets(t.Context(), s, from, to); err != nil {
		t.Fatal(err)
	}
	counting.items, counting.queries = 0, 0
	got, err = warm.ReadBuckets(t.Context(), s, from, to)
	if err != nil {
		t.Fatal(err)
	}
	wantBuckets("second read", got)
	if max := 8 + 3*dynamo.MetricShards; counting.items > max || counting.queries != 2 {
		t.Errorf("second read: %d items in %d queries, want at most %d (8 closed minutes, 3 minutes' shards) in 2", counting.items, counting.queries, max)
	}
	// A late write into a compacted minute, and two readers compacting the
	// rest at once.
	now = start.Add(15 * time.Minute)
	late := metrics.Count(metrics.APIErrors, s.AccountID, s.ProjectID, start.Add(3*time.Minute))
	all = append(all, late)
	if err := rec.Record(t.Context(), late); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	reads := make([][]buckets.Bucket, 2)
	for i, r := range []*metricstore.Store{st, other} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var err error
			if reads[i], err = r.ReadBuckets(t.Context(), s, from, to); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	wantBuckets("racing reader 1", reads[0])
	wantBuckets("racing reader 2", reads[1])
	if st.CompactErrors()+other.CompactErrors() != 0 {
		t.Errorf("compaction errors: %d, %d", st.CompactErrors(), other.CompactErrors())
	}
	got, err = st.ReadBuckets(t.Context(), s, from, to)
	if err != nil {
		t.Fatal(err)
	}
	wantBuckets("after the race", got)
	_, _, _ = db.take()
	if _, err := warm.ReadBuckets(t.Context(), s, from, to); err != nil {
		t.Fatal(err) // it learns that every minute is covered
	}
	counting.items, counting.queries = 0, 0
	if _, err := warm.ReadBuckets(t.Context(), s, from, to); err != nil {
		t.Fatal(err)
	}
	if counting.items != 10 || counting.queries > 2 {
		t.Errorf("read once every minute is compacted: %d items in %d queries, want 10 in at most 2", counting.items, counting.queries)
	}
}

// TestMetricsPastRange: a range that ended long ago, read by a store that
// read the scope's recent minutes before (and by one that never read it),
// returns its own minutes only.
func TestMetricsPastRange(t *testing.T) {
	c := client(t)
	table := newTable(t, c)
	start := metrics.Minute(time.Now()).Add(-30 * time.Minute)
	now := start
	clock := func() time.Time { return now }
	s := newMetricScope()
	rec := &buckets.Recorder{Store: metricstore.NewWithClock(c, table, clock)}
	for m := range 6 { // a shard write in each of 6 minutes
		now = start.Add(time.Duration(m)*time.Minute + 10*time.Second)
		if err := rec.Record(t.Context(), metrics.Count(metrics.CallVolume, s.AccountID, s.ProjectID, now)); err != nil {
			t.Fatal(err)
		}
	}
	now = start.Add(10 * time.Minute)
	st := metricstore.NewWithClock(c, table, clock)
	for range 2 { // compacts minutes 0 to 5, then learns they are covered
		if got, err := st.ReadBuckets(t.Context(), s, start, now); err != nil || len(got) != 6 {
			t.Fatalf("the 6 minutes: %d buckets, %v", len(got), err)
		}
	}
	for _, st := range []*metricstore.Store{st, metricstore.NewWithClock(c, table, clock)} {
		got, err := st.ReadBuckets(t.Context(), s, start.Add(time.Minute), start.Add(3*time.Minute))
		if err != nil || len(got) != 2 || !got[0].Minute.Equal(start.Add(time.Minute)) || !got[1].Minute.Equal(start.Add(2*time.Minute)) {
			t.Errorf("minutes 1 and 2 of 6: %d buckets %+v, %v", len(got), got, err)
		}
	}
}

// itemCountingDB counts Queries and the items they return.
type itemCountingDB struct {
	metricstore.DB
	mu      sync.Mutex
	items   int
	queries int
}

func (c *itemCountingDB) Query(ctx context.Context, in *dynamodb.QueryInput, o ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	out, err := c.DB.Query(ctx, in, o...)
	if err == nil {
		c.mu.Lock()
		c.items += len(out.Items)
		c.queries++
		c.mu.Unlock()
	}
	return out, err
}

// TestMetricsLateWriteDuringCompaction: a late write that lands between a
// reader's Queries and its compaction makes the compaction fail (the
// closed item is no longer as read): nothing is lost, the next read
// compacts.
func TestMetricsLateWriteDuringCompaction(t *testing.T) {
	c := client(t)
	table := newTable(t, c)
	start := metrics.Minute(time.Now()).Add(-20 * time.Minute)
	now := start.Add(10 * time.Second)
	clock := func() time.Time { return now }
	s := newMetricScope()
	rec := &buckets.Recorder{Store: metricstore.NewWithClock(c, table, clock)}
	if err := rec.Record(t.Context(), metrics.Count(metrics.CallVolume, s.AccountID, s.ProjectID, now)); err != nil {
		t.Fatal(err) // a shard of the open minute
	}
	now = start.Add(5 * time.Minute)
	if err := rec.Record(t.Context(), metrics.Count(metrics.CallVolume, s.AccountID, s.ProjectID, start)); err != nil {
		t.Fatal(err) // a late write: the closed item, not compacted
	}
	injected := false
	db := &hookDB{DB: c, beforePut: func() {
		if !injected {
			injected = true
			if err := rec.Record(t.Context(), metrics.Count(metrics.CallVolume, s.AccountID, s.ProjectID, start)); err != nil {
				t.Error(err)
			}
		}
	}}
	st := metricstore.NewWithClock(db, table, clock)
	if _, err := st.ReadBuckets(t.Context(), s, start, start.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if st.CompactErrors() != 1 {
		t.Errorf("compaction errors: %d, want 1 (the late write won)", st.CompactErrors())
	}
	for i := range 2 {
		got, err := st.ReadBuckets(t.Context(), s, start, start.Add(time.Minute))
		if err != nil || len(got) != 1 || got[0].Counts.Of(metrics.CallVolume) != 3 {
			t.Errorf("read %d: %+v, %v; want call_volume 3", i, got, err)
		}
	}
	if st.CompactErrors() != 1 {
		t.Errorf("compaction errors: %d, want still 1", st.CompactErrors())
	}
}

// hookDB calls beforePut before each PutItem.
type hookDB struct {
	metricstore.DB
	beforePut func()
}

func (h *hookDB) PutItem(ctx context.Context, in *dynamodb.PutItemInput, o ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	h.beforePut()
	return h.DB.PutItem(ctx, in, o...)
}

// TestMetricsCallBudget: one UpdateItem per scope and minute written; a
// read makes two Queries at once (closed items, shards; their pages
// aside); pages followed.
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
	if u, p, q := db.take(); u != 60 || p != 0 || q != 0 {
		t.Errorf("writing 60 buckets: %d updates, %d puts, %d queries; want 60 updates", u, p, q)
	}
	got, err := st.ReadBuckets(t.Context(), s, base, base.Add(time.Hour))
	if err != nil || len(got) != 30 {
		t.Fatalf("ReadBuckets: %d buckets, %v", len(got), err)
	}
	if u, p, q := db.take(); q != 2 || u != 0 || p != 30 {
		t.Errorf("reading a scope: %d queries, %d updates, %d puts; want 2 queries (closed items, shards) and 30 compactions", q, u, p)
	}
	if _, err := st.ReadBuckets(t.Context(), s, base, base.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if u, p, q := db.take(); q != 2 || u != 0 || p != 0 {
		t.Errorf("reading a compacted scope: %d queries, %d updates, %d puts; want 2 queries", q, u, p)
	}
	if got, _ := st.ReadBuckets(t.Context(), s, base, base); len(got) != 0 {
		t.Errorf("empty range: %d buckets", len(got))
	}
	if _, _, q := db.take(); q != 0 {
		t.Errorf("an empty range made %d queries", q)
	}

	db.pageSize = 7 // 30 items: pages of 7, 7, 7, 7, 2
	got, err = st.ReadBuckets(t.Context(), s, base, base.Add(time.Hour))
	if err != nil || len(got) != 30 {
		t.Fatalf("paginated ReadBuckets: %d buckets, %v", len(got), err)
	}
	if _, _, q := db.take(); q < 5 {
		t.Errorf("pages of 7 over 30 items: %d Query calls, want at least 5", q)
	}
	for i, b := range got {
		if !b.Minute.Equal(base.Add(time.Duration(i)*time.Minute)) || b.Counts.Of(metrics.CallVolume) != 1 {
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
	if err != nil || len(got) != 1 || got[0].Counts.Of(metrics.CallVolume) != 3 {
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

// fakeMetricsDB answers UpdateItem from a script and records what it was
// sent; it needs no DynamoDB.
type fakeMetricsDB struct {
	mu      sync.Mutex
	err     error
	written map[string]int // updates by sort key
}

func (f *fakeMetricsDB) UpdateItem(_ context.Context, in *dynamodb.UpdateItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return nil, f.err
	}
	if f.written == nil {
		f.written = map[string]int{}
	}
	f.written[in.Key[tables.SK].(*types.AttributeValueMemberS).Value]++
	return &dynamodb.UpdateItemOutput{}, nil
}

func (f *fakeMetricsDB) PutItem(context.Context, *dynamodb.PutItemInput, ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	return nil, f.err
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

// TestMetricsWideSketchIsSplit: a bucket whose sketch has more bins than
// one UpdateItem's expression holds is written in several.
func TestMetricsWideSketchIsSplit(t *testing.T) {
	f := &fakeMetricsDB{}
	minute := metrics.Minute(time.Now()).Add(-time.Hour)
	var events []metrics.Event
	for i := range 700 { // latencies 1.02^i ms apart: one bin each
		events = append(events, metrics.Event{AccountID: "acct_fake", Kind: metrics.TurnLatency, Value: math.Pow(1.021, float64(i)), At: minute})
	}
	if err := metricstore.New(f, "m").AddBuckets(t.Context(), buckets.Aggregate(events)); err != nil {
		t.Fatal(err)
	}
	if n := f.written["C#"+strconv.FormatInt(minute.Unix(), 10)]; n < 3 {
		t.Errorf("a sketch of about 700 bins in %d UpdateItems, want at least 3", n)
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
