// Package metricstore is the metric store (buckets.Store) on the DynamoDB
// metrics table. It is apart from shared/store/dynamo because its items hold
// DDSketch sketches in their protobuf encoding: only the functions that
// record or read metrics link those libraries.
package metricstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/voiceops/opsapi/shared/metrics"
	"github.com/voiceops/opsapi/shared/metrics/buckets"
	"github.com/voiceops/opsapi/shared/platform/tables"
	"github.com/voiceops/opsapi/shared/store/dynamo"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// The items are laid out as shared/store/dynamo's metriclayout.go says.

// writeParallel bounds the UpdateItem calls one AddBuckets makes at once.
const writeParallel = 8

// Key attributes of the metrics table.
var (
	attrMetricPK  = tables.Metrics.PartitionKey
	attrMetricSK  = tables.Metrics.SortKey
	attrMetricTTL = tables.Metrics.TTLAttribute
)

// DB is the part of the DynamoDB client the metric store uses.
type DB interface {
	UpdateItem(ctx context.Context, params *dynamodb.UpdateItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error)
	PutItem(ctx context.Context, params *dynamodb.PutItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	Query(ctx context.Context, params *dynamodb.QueryInput, optFns ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error)
}

var _ DB = (*dynamodb.Client)(nil)

// Store is the metric store on the metrics table.
type Store struct {
	db    DB
	table string
	now   func() time.Time
	// compactErrors counts compactions that failed for another reason
	// than a lost race (the read itself succeeded; the next read retries).
	compactErrors atomic.Int64

	mu    sync.Mutex
	first map[metrics.Scope]time.Time // per scope, the first minute no compaction covered at its last read
}

// rememberedScopes bounds the scopes a store remembers (about 100 B each);
// past it, it starts over.
const rememberedScopes = 100_000

func (m *Store) firstUncovered(s metrics.Scope) (time.Time, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.first[s]
	return t, ok
}

func (m *Store) rememberFirstUncovered(s metrics.Scope, t time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.first == nil || len(m.first) >= rememberedScopes {
		m.first = map[metrics.Scope]time.Time{}
	}
	m.first[s] = t
}

// New returns the metric store on the metrics table named table.
func New(db DB, table string) *Store {
	return &Store{db: db, table: table, now: time.Now}
}

// NewWithClock is New with the clock that decides which minutes are open,
// closed and expired (tests).
func NewWithClock(db DB, table string, now func() time.Time) *Store {
	return &Store{db: db, table: table, now: now}
}

// CompactErrors returns how many compactions failed other than by losing a
// race to another reader.
func (m *Store) CompactErrors() int64 { return m.compactErrors.Load() }

var _ buckets.Store = (*Store)(nil)

// Partition returns the partition key of a scope's buckets.
func Partition(s metrics.Scope) string { return dynamo.MetricPartition(s.AccountID, s.ProjectID) }

// metricCeilMinute returns the first whole minute at or after t.
func metricCeilMinute(t time.Time) time.Time {
	m := metrics.Minute(t)
	if m.Before(t) {
		m = m.Add(time.Minute)
	}
	return m
}

// numbers returns what a bucket adds to its minute: its non-zero counts
// (every kind's, named by dynamo.MetricCountAttr) and its sketch's bins.
func numbers(b buckets.Bucket) []dynamo.MetricNumber {
	var out []dynamo.MetricNumber
	for _, k := range voiceops.MetricKinds {
		if n := b.Counts.Of(k); n != 0 {
			out = append(out, dynamo.MetricNumber{Attr: dynamo.MetricCountAttr(k), Value: strconv.FormatInt(n, 10)})
		}
	}
	if b.Latency != nil {
		if z := b.Latency.ZeroCount(); z != 0 {
			out = append(out, dynamo.MetricNumber{Attr: dynamo.MetricBinAttr(0, true), Value: formatCount(z)})
		}
		b.Latency.EachBin(func(i int, c float64) {
			out = append(out, dynamo.MetricNumber{Attr: dynamo.MetricBinAttr(i, false), Value: formatCount(c)})
		})
	}
	return out
}

func formatCount(c float64) string { return strconv.FormatFloat(c, 'g', -1, 64) }

// decodeMetricItem reads a shard's or a closed minute's item (or one of the
// layout before) into a bucket of scope s.
func decodeMetricItem(s metrics.Scope, it item) (b buckets.Bucket, closed bool, err error) {
	skv, _ := it[attrMetricSK].(*types.AttributeValueMemberS)
	var sk string
	if skv != nil {
		sk = skv.Value
	}
	minute, closed, err := dynamo.MetricItemMinute(sk)
	if err != nil {
		return buckets.Bucket{}, false, err
	}
	var bad error
	count := func(name string) int64 {
		n, err := optNum(it, name)
		if err != nil && bad == nil {
			bad = fmt.Errorf("metric item %q: attribute %s: %w", sk, name, err)
		}
		return n
	}
	b = buckets.Bucket{Scope: s, Minute: minute}
	for _, k := range voiceops.MetricKinds {
		b.Counts.Set(k, count(dynamo.MetricCountAttr(k)))
	}
	if bad != nil {
		return buckets.Bucket{}, false, bad
	}
	for name, v := range it {
		index, zero, ok := dynamo.MetricBin(name)
		if !ok {
			continue
		}
		n, isNum := v.(*types.AttributeValueMemberN)
		var c float64
		if isNum {
			c, err = strconv.ParseFloat(n.Value, 64)
		}
		if !isNum || err != nil {
			return buckets.Bucket{}, false, fmt.Errorf("metric item %q: attribute %s: want a number, got %v", sk, name, v)
		}
		if b.Latency == nil {
			b.Latency = buckets.NewSketch()
		}
		if err := b.Latency.AddBinCount(index, zero, c); err != nil {
			return buckets.Bucket{}, false, fmt.Errorf("metric item %q: %w", sk, err)
		}
	}
	if v, ok := it[dynamo.MetricAttrLatency]; ok { // the layout before
		bin, ok := v.(*types.AttributeValueMemberB)
		if !ok {
			return buckets.Bucket{}, false, fmt.Errorf("metric item %q: attribute %s: want binary, got %T", sk, dynamo.MetricAttrLatency, v)
		}
		old, err := buckets.DecodeSketch(bin.Value)
		if err != nil {
			return buckets.Bucket{}, false, fmt.Errorf("metric item %q: %w", sk, err)
		}
		if b.Latency == nil {
			b.Latency = old
		} else {
			_ = b.Latency.MergeWith(old)
		}
	}
	if b.Latency != nil && b.Latency.IsEmpty() {
		b.Latency = nil
	}
	return b, closed, nil
}

// AddBuckets adds each scope's minute of buckets (merged first) into its
// items: one UpdateItem each (dynamo.AddMetrics), 8 at once. Buckets
// already past the retention are not written. When it fails, some may have
// been written: a caller that retries the whole call counts those twice
// (at least once, never lost).
func (m *Store) AddBuckets(ctx context.Context, bs []buckets.Bucket) error {
	combined, err := buckets.Combine(bs)
	if err != nil {
		return err
	}
	now := m.now()
	var live []buckets.Bucket
	for _, b := range combined {
		if b.Minute.Add(metrics.Retention).After(now) { // not too old to be accepted
			live = append(live, b)
		}
	}
	errs := make([]error, len(live))
	sem := make(chan struct{}, writeParallel)
	var wg sync.WaitGroup
	for i, b := range live {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			errs[i] = dynamo.AddMetrics(ctx, m.db, m.table, Partition(b.Scope), b.Minute, now, numbers(b))
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return wrap("AddBuckets", err)
	}
	return nil
}

// minuteRead is what a read found of one minute.
type minuteRead struct {
	closed    *buckets.Bucket // its closed item's, if any
	version   string          // the closed item's v ("" without one)
	compacted bool            // the closed item holds the shards' sum
	shards    []buckets.Bucket
}

// ReadBuckets reads the scope's minutes in [from, to): one Query of their
// closed items and, at the same time, one of the shards of the minutes
// from the first one a compaction may not cover (metriclayout.go); then,
// if an earlier minute is not covered after all, one of its shards and
// those after. Each Query follows its pages; it
// ignores expired items and merges each minute. Then it compacts the
// closed minutes whose shards it read, so that the next read skips them:
// a failed compaction fails nothing (the next read tries again).
func (m *Store) ReadBuckets(ctx context.Context, s metrics.Scope, from, to time.Time) ([]buckets.Bucket, error) {
	lo, hi := metricCeilMinute(from), metricCeilMinute(to)
	if !lo.Before(hi) {
		return []buckets.Bucket{}, nil
	}
	now := m.now()
	last := hi.Add(-time.Minute)
	byMinute := map[int64]*minuteRead{}
	at := func(t time.Time) *minuteRead {
		r := byMinute[t.Unix()]
		if r == nil {
			r = &minuteRead{}
			byMinute[t.Unix()] = r
		}
		return r
	}
	type span struct{ from, to int64 }
	var covered []span
	// The shards are read at once, beside the closed items, from where the
	// last read of the scope found the first minute no compaction covers
	// (this process remembers it; from lo when it does not know), and at
	// most from the last minute closed: at steady state a busy scope's
	// earlier minutes are compacted and a quiet scope's have no shards, so
	// a read is one round trip. When some earlier minute is uncovered after
	// all, its shards are read after.
	recent := metrics.Minute(now.Add(-dynamo.MetricClosedAfter))
	if last, ok := m.firstUncovered(s); ok && last.Before(recent) {
		recent = last
	} else if !ok {
		recent = lo
	}
	if recent.Before(lo) {
		recent = lo
	}
	var shards []buckets.Bucket
	shardsOf := func(from, last time.Time) error {
		return m.query(ctx, s, dynamo.MetricMinuteKey(from), dynamo.MetricShardsEnd(last), now, func(b buckets.Bucket, closed bool, _ item) error {
			if !closed {
				shards = append(shards, b)
			}
			return nil
		})
	}
	var recentErr error
	var wg sync.WaitGroup
	if recent.Before(hi) {
		wg.Go(func() { recentErr = shardsOf(recent, last) })
	}
	err := m.query(ctx, s, dynamo.MetricClosedKey(lo), dynamo.MetricClosedKey(last), now, func(b buckets.Bucket, closed bool, it item) error {
		if !closed {
			return nil
		}
		r := at(b.Minute)
		r.closed = &b
		if v, ok := it[dynamo.MetricAttrVersion].(*types.AttributeValueMemberN); ok {
			r.version = v.Value
		}
		if _, ok := it[dynamo.MetricAttrCompacted]; ok {
			r.compacted = true
			cf, err1 := optNum(it, dynamo.MetricAttrCoverFrom)
			ct, err2 := optNum(it, dynamo.MetricAttrCoverTo)
			if err1 == nil && err2 == nil && cf < ct {
				covered = append(covered, span{cf, ct})
			}
		}
		return nil
	})
	wg.Wait()
	if err = cmp.Or(err, recentErr); err != nil {
		return nil, wrap("ReadBuckets", err)
	}
	// The first minute that no compaction covers: shards count from it on.
	first := lo
	for first.Before(hi) {
		sec := first.Unix()
		done := byMinute[sec] != nil && byMinute[sec].compacted
		for _, c := range covered {
			done = done || (c.from <= sec && sec < c.to)
		}
		if !done {
			break
		}
		first = first.Add(time.Minute)
	}
	m.rememberFirstUncovered(s, first)
	if end := min(recent.Unix(), hi.Unix()); first.Unix() < end {
		if err := shardsOf(first, time.Unix(end, 0).Add(-time.Minute)); err != nil {
			return nil, wrap("ReadBuckets", err)
		}
	}
	for _, b := range shards {
		if !b.Minute.Before(first) && b.Minute.Before(hi) {
			r := at(b.Minute)
			r.shards = append(r.shards, b)
		}
	}
	var parts []buckets.Bucket
	var compact []buckets.Bucket // closed minutes to compact, each merged
	var versions []string
	for sec, r := range byMinute {
		minute := time.Unix(sec, 0).UTC()
		var merged []buckets.Bucket
		if r.closed != nil {
			merged = append(merged, *r.closed)
		}
		if !r.compacted {
			merged = append(merged, r.shards...)
		}
		parts = append(parts, merged...)
		if !r.compacted && (len(r.shards) > 0 || r.closed != nil) && !minute.Before(first) && dynamo.MetricClosed(minute, now) {
			sum, err := buckets.Combine(merged)
			if err == nil && len(sum) == 1 {
				compact = append(compact, sum[0])
				versions = append(versions, r.version)
			}
		}
	}
	out, err := buckets.Combine(parts)
	if err != nil {
		return nil, wrap("ReadBuckets", err)
	}
	if out == nil {
		out = []buckets.Bucket{}
	}
	// The compactions go in ascending order of minute, and each claims to
	// cover the minutes from first through its own: only once every minute
	// before it is compacted. The last claims up to end (every closed
	// minute of the range): the minutes it skipped had no shards.
	slices.SortFunc(compact, func(a, b buckets.Bucket) int { return a.Minute.Compare(b.Minute) })
	end := min(hi.Unix(), metrics.Minute(now.Add(-dynamo.MetricClosedAfter)).Unix()+60)
	for i, b := range compact {
		coverTo := b.Minute.Unix() + 60
		if i == len(compact)-1 {
			coverTo = end
		}
		if err := m.compact(ctx, b, versions[i], first.Unix(), coverTo); err != nil {
			m.compactErrors.Add(1)
			break
		}
	}
	return out, nil
}

// compact writes a closed minute's item holding b (its closed item as read,
// at version, plus its shards), flagged compacted and covering the minutes
// [coverFrom, coverTo); only if the closed item is still as read and not
// compacted yet. Losing to another reader is no error (the winner wrote the
// same sum); a late write in between is (the minute is not compacted).
func (m *Store) compact(ctx context.Context, b buckets.Bucket, version string, coverFrom, coverTo int64) error {
	v := int64(0)
	if version != "" {
		var err error
		if v, err = strconv.ParseInt(version, 10, 64); err != nil {
			return err
		}
	}
	it := item{
		attrMetricPK:               avS(Partition(b.Scope)),
		attrMetricSK:               avS(dynamo.MetricClosedKey(b.Minute)),
		attrMetricTTL:              avN(dynamo.MetricExpiry(b.Minute).Unix()),
		dynamo.MetricAttrVersion:   avN(v),
		dynamo.MetricAttrCompacted: avN(1),
		dynamo.MetricAttrCoverFrom: avN(coverFrom),
		dynamo.MetricAttrCoverTo:   avN(coverTo),
	}
	for _, n := range numbers(b) {
		it[n.Attr] = &types.AttributeValueMemberN{Value: n.Value}
	}
	in := &dynamodb.PutItemInput{
		TableName: &m.table, Item: it, ExpressionAttributeNames: map[string]string{"#pk": attrMetricPK},
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}
	if version == "" {
		in.ConditionExpression = aws.String("attribute_not_exists(#pk)")
	} else {
		in.ConditionExpression = aws.String("#v = :v AND attribute_not_exists(#c)")
		in.ExpressionAttributeNames = map[string]string{"#v": dynamo.MetricAttrVersion, "#c": dynamo.MetricAttrCompacted}
		in.ExpressionAttributeValues = item{":v": avN(v)}
	}
	_, err := m.db.PutItem(ctx, in)
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		if _, done := ccf.Item[dynamo.MetricAttrCompacted]; done {
			return nil // another reader compacted it
		}
		return errors.New("a late write changed the minute meanwhile")
	}
	return err
}

// query reads the scope's items with sort keys from lo to hi (inclusive),
// strongly consistent, following the pages, and calls f with each
// unexpired one, decoded.
func (m *Store) query(ctx context.Context, s metrics.Scope, lo, hi string, now time.Time, f func(buckets.Bucket, bool, item) error) error {
	in := &dynamodb.QueryInput{
		TableName:                 &m.table,
		KeyConditionExpression:    aws.String("#pk = :pk AND #sk BETWEEN :lo AND :hi"),
		ExpressionAttributeNames:  map[string]string{"#pk": attrMetricPK, "#sk": attrMetricSK},
		ExpressionAttributeValues: item{":pk": avS(Partition(s)), ":lo": avS(lo), ":hi": avS(hi)},
		ConsistentRead:            aws.Bool(true),
	}
	for {
		out, err := m.db.Query(ctx, in)
		if err != nil {
			return err
		}
		for _, it := range out.Items {
			if dynamo.Expired(it, now) {
				continue
			}
			b, closed, err := decodeMetricItem(s, it)
			if err != nil {
				return err
			}
			if err := f(b, closed, it); err != nil {
				return err
			}
		}
		if len(out.LastEvaluatedKey) == 0 {
			return nil
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
}

// item is one stored item.
type item = map[string]types.AttributeValue

func avS(s string) types.AttributeValue { return &types.AttributeValueMemberS{Value: s} }
func avN(n int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(n, 10)}
}

// optNum reads a number attribute that may be absent (or NULL): 0 then.
func optNum(it item, name string) (int64, error) {
	switch v := it[name].(type) {
	case nil, *types.AttributeValueMemberNULL:
		return 0, nil
	case *types.AttributeValueMemberN:
		return strconv.ParseInt(v.Value, 10, 64)
	default:
		return 0, fmt.Errorf("want a number, got %T", v)
	}
}

// wrap returns an SDK error as a plain (so internal: 500) error.
func wrap(op string, err error) error {
	return fmt.Errorf("metricstore: %s: %w", op, err)
}
