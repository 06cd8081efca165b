// Package metricstore is the metric store (buckets.Store) on the DynamoDB
// metrics table. It is apart from shared/dynamo because its items hold
// DDSketch sketches in their protobuf encoding: only the functions that
// record or read metrics link those libraries.
package metricstore

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/voiceops/opsapi/shared/buckets"
	"github.com/voiceops/opsapi/shared/dynamo"
	"github.com/voiceops/opsapi/shared/metrics"
	"github.com/voiceops/opsapi/shared/tables"
)

// The items are laid out as shared/dynamo's metriclayout.go says.
const (
	// batchWriteMax is BatchWriteItem's limit of items per call.
	batchWriteMax = 25
	// unprocessedAttempts bounds the calls made for one batch while
	// DynamoDB keeps returning some of its items as unprocessed.
	unprocessedAttempts = 10
)

// Key attributes of the metrics table.
var (
	attrMetricPK  = tables.Metrics.PartitionKey
	attrMetricSK  = tables.Metrics.SortKey
	attrMetricTTL = tables.Metrics.TTLAttribute
)

// DB is the part of the DynamoDB client the metric store uses.
type DB interface {
	BatchWriteItem(ctx context.Context, params *dynamodb.BatchWriteItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error)
	Query(ctx context.Context, params *dynamodb.QueryInput, optFns ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error)
}

var _ DB = (*dynamodb.Client)(nil)

// Store is the metric store on the metrics table.
type Store struct {
	db    DB
	table string
	now   func() time.Time
}

// New returns the metric store on the metrics table named table.
func New(db DB, table string) *Store {
	return &Store{db: db, table: table, now: time.Now}
}

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

func encodeMetricBucket(b buckets.Bucket) (item, error) {
	it := item{
		attrMetricPK:  avS(Partition(b.Scope)),
		attrMetricSK:  avS(dynamo.MetricSortKey(b.Minute)),
		attrMetricTTL: avN(dynamo.MetricExpiry(b.Minute).Unix()),
	}
	for name, n := range map[string]int64{
		dynamo.MetricAttrActivity: b.Counts.Activity, dynamo.MetricAttrTurns: b.Counts.Turns, dynamo.MetricAttrAPIErrors: b.Counts.APIErrors,
		dynamo.MetricAttrFunctionErrors: b.Counts.FunctionErrors, dynamo.MetricAttrCallCrashes: b.Counts.CallCrashes, dynamo.MetricAttrCallVolume: b.Counts.CallVolume,
	} {
		if n != 0 {
			it[name] = avN(n)
		}
	}
	if b.Latency != nil && !b.Latency.IsEmpty() {
		enc, err := buckets.EncodeSketch(b.Latency)
		if err != nil {
			return nil, err
		}
		it[dynamo.MetricAttrLatency] = &types.AttributeValueMemberB{Value: enc}
	}
	return it, nil
}

func decodeMetricBucket(s metrics.Scope, it item) (buckets.Bucket, error) {
	skv, _ := it[attrMetricSK].(*types.AttributeValueMemberS)
	var sk string
	if skv != nil {
		sk = skv.Value
	}
	minute, _, ok := strings.Cut(sk, "#")
	sec, err := strconv.ParseInt(minute, 10, 64)
	if !ok || len(minute) != dynamo.MetricMinuteDigits || err != nil {
		return buckets.Bucket{}, fmt.Errorf("metric item %q: malformed sort key", sk)
	}
	var bad error
	count := func(name string) int64 {
		n, err := optNum(it, name)
		if err != nil && bad == nil {
			bad = fmt.Errorf("metric item %q: attribute %s: %w", sk, name, err)
		}
		return n
	}
	b := buckets.Bucket{Scope: s, Minute: time.Unix(sec, 0).UTC(), Counts: buckets.Counts{
		Activity: count(dynamo.MetricAttrActivity), Turns: count(dynamo.MetricAttrTurns), APIErrors: count(dynamo.MetricAttrAPIErrors),
		FunctionErrors: count(dynamo.MetricAttrFunctionErrors), CallCrashes: count(dynamo.MetricAttrCallCrashes), CallVolume: count(dynamo.MetricAttrCallVolume),
	}}
	if bad != nil {
		return buckets.Bucket{}, bad
	}
	if v, ok := it[dynamo.MetricAttrLatency]; ok {
		bin, ok := v.(*types.AttributeValueMemberB)
		if !ok {
			return buckets.Bucket{}, fmt.Errorf("metric item %q: attribute %s: want binary, got %T", sk, dynamo.MetricAttrLatency, v)
		}
		if b.Latency, err = buckets.DecodeSketch(bin.Value); err != nil {
			return buckets.Bucket{}, fmt.Errorf("metric item %q: %w", sk, err)
		}
	}
	return b, nil
}

// AddBuckets writes one new item per scope and minute of buckets (merged
// first), 25 to a BatchWriteItem call, retrying the items DynamoDB leaves
// unprocessed. Buckets already past the retention are not written. When it
// fails, some batches may have been written: a caller that retries the
// whole call counts those twice (at least once, never lost).
func (m *Store) AddBuckets(ctx context.Context, bs []buckets.Bucket) error {
	combined, err := buckets.Combine(bs)
	if err != nil {
		return err
	}
	now := m.now()
	writes := make([]types.WriteRequest, 0, len(combined))
	for _, b := range combined {
		if !b.Minute.Add(metrics.Retention).After(now) { // too old to be accepted
			continue
		}
		it, err := encodeMetricBucket(b)
		if err != nil {
			return wrap("AddBuckets", err)
		}
		writes = append(writes, types.WriteRequest{PutRequest: &types.PutRequest{Item: it}})
	}
	for len(writes) > 0 {
		n := min(len(writes), batchWriteMax)
		if err := m.batchWrite(ctx, writes[:n]); err != nil {
			return err
		}
		writes = writes[n:]
	}
	return nil
}

// batchWrite writes up to 25 items, calling again with the unprocessed
// ones after a growing, jittered pause.
func (m *Store) batchWrite(ctx context.Context, writes []types.WriteRequest) error {
	for attempt := 1; ; attempt++ {
		out, err := m.db.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{
			RequestItems: map[string][]types.WriteRequest{m.table: writes},
		})
		if err != nil {
			return wrap("AddBuckets", err)
		}
		writes = out.UnprocessedItems[m.table]
		if len(writes) == 0 {
			return nil
		}
		if attempt == unprocessedAttempts {
			return wrap("AddBuckets", fmt.Errorf("%d items still unprocessed after %d calls", len(writes), attempt))
		}
		if err := dynamo.Backoff(ctx, attempt); err != nil {
			return wrap("AddBuckets", err)
		}
	}
}

// ReadBuckets reads the scope's items of the minutes in [from, to) with one
// Query (following its pages), ignores expired ones, and merges the items
// of each minute.
func (m *Store) ReadBuckets(ctx context.Context, s metrics.Scope, from, to time.Time) ([]buckets.Bucket, error) {
	// Minutes are whole, so minute >= from iff minute >= ceil(from), and
	// minute < to iff minute < ceil(to). No sort key equals a bare minute
	// key, so BETWEEN's inclusive upper end still excludes ceil(to).
	lo, hi := metricCeilMinute(from), metricCeilMinute(to)
	if !lo.Before(hi) {
		return []buckets.Bucket{}, nil
	}
	in := &dynamodb.QueryInput{
		TableName:                 &m.table,
		KeyConditionExpression:    aws.String("#pk = :pk AND #sk BETWEEN :lo AND :hi"),
		ExpressionAttributeNames:  map[string]string{"#pk": attrMetricPK, "#sk": attrMetricSK},
		ExpressionAttributeValues: item{":pk": avS(Partition(s)), ":lo": avS(dynamo.MetricMinuteKey(lo)), ":hi": avS(dynamo.MetricMinuteKey(hi))},
		ConsistentRead:            aws.Bool(true),
	}
	now := m.now()
	var parts []buckets.Bucket
	for {
		out, err := m.db.Query(ctx, in)
		if err != nil {
			return nil, wrap("ReadBuckets", err)
		}
		for _, it := range out.Items {
			if dynamo.Expired(it, now) {
				continue
			}
			b, err := decodeMetricBucket(s, it)
			if err != nil {
				return nil, wrap("ReadBuckets", err)
			}
			parts = append(parts, b)
		}
		if len(out.LastEvaluatedKey) == 0 {
			break
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
	out, err := buckets.Combine(parts)
	if err != nil {
		return nil, wrap("ReadBuckets", err)
	}
	if out == nil {
		out = []buckets.Bucket{}
	}
	return out, nil
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
