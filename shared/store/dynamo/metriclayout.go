package dynamo

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/voiceops/opsapi/shared/platform/tables"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// The metrics table: the one description of its items. A scope (an
// account, or a project of it) has one partition, and a minute of it is
// held by a bounded number of items whatever the event rate:
//
//	pk = M#<account>               (the account's scope: every event of the account)
//	pk = M#<account>#<project>     (a project's scope)
//
//	sk = <minute>#<shard>   an open minute's shard (shard 0 to MetricShards-1):
//	                        every write of the minute that is current by the
//	                        writer's clock adds (UpdateItem ADD) into one shard
//	                        at random, so no item takes every write of a busy
//	                        scope (an item sustains about 1,000 WRU/s).
//	sk = C#<minute>         the closed minute: the sum of its shards, written
//	                        once (a conditional Put, flagged compacted) by the
//	                        first reader that finds the minute closed
//	                        (MetricClosed); a late write (an event of an
//	                        earlier minute) adds into it directly.
//	sk = <minute>#<16 random>  the layout before (one item per write): read
//	                        like a shard until its TTL deletes it.
//	sk = T#<random>         a touch (a wake-up in a rule's or a silence's
//	                        transaction, Config.txWake): wakes
//	                        the stream, never read.
//
// <minute> is the minute's unix seconds in MetricMinuteDigits digits.
// Attributes of shards and closed minutes: one count per metric kind
// (voiceops' table), named after the kind (MetricCountAttr: activity,
// turns for turn_latency, api_errors, function_errors, call_crashes,
// call_volume; absent when 0);
// the latency sketch as one number per bin (b<index>, and bz for the zero
// count: MetricBinAttr), so that DynamoDB adds sketches in place; v, a
// version that every write adds 1 to; expires_at = minute + 48 h
// (voiceops.MetricMinuteRetention: the metric series and the rule preview
// read them; the hourly roll-ups, sk = H#<hour>, live on: metricstore/rollups.go).
// A closed
// minute's compaction adds compacted = 1 and the range of minutes it
// examined, [cf, ct) (unix seconds): every minute of that range that had
// data has its closed item, so a reader reads no shard of it.
//
// A read of the minutes [from, to) (shared/store/dynamo/metricstore: ReadBuckets)
// is one Query of the closed items of the range, and one Query of the
// shards from the first minute that no compaction covers: at steady state
// the window's minutes plus the shards of the last two or three minutes,
// however many events they hold. It then compacts the closed minutes it
// read shards of. A closed minute is one that no shard write can still
// reach: writers add into a shard only while its minute is current by
// their clock, within MetricWriteTimeout, and a minute is compacted only
// once MetricClosedAfter has passed since it began.
//
// Account and project IDs never contain '#', so the keys of two scopes
// never collide. A new kind of item (hourly roll-ups, say) takes a sort-key
// prefix of its own, neither digits nor C#, so that neither Query of a read
// sees it; the stream wakes the evaluator for it like any write.
const (
	// MetricMinuteDigits is the width of the minute in the sort key: unix
	// seconds fit in 10 digits until the year 2286, and fixed width sorts
	// by time.
	MetricMinuteDigits = 10
	metricMaxMinuteSec = 9_999_999_999

	// MetricShards is how many items share the writes of an open minute:
	// 4 items take about 4,000 WRU a second (a few thousand events a
	// second on one scope) and add at most 4 items per open minute to a
	// read.
	MetricShards = 4
	// MetricWriteTimeout bounds a write into a shard, retries included, so
	// that none lands after its minute is compacted.
	MetricWriteTimeout = 20 * time.Second
	// MetricClosedAfter: a minute is compacted once this long has passed
	// since it began: its last shard write started before its end and
	// ended within MetricWriteTimeout, with 40 s to spare for clocks.
	MetricClosedAfter = 2 * time.Minute

	// MetricAttrLatency is the layout before's sketch (DDSketch's protobuf
	// encoding), read until those items expire.
	MetricAttrLatency   = "latency"
	MetricAttrVersion   = "v"
	MetricAttrCompacted = "compacted"
	MetricAttrCoverFrom = "cf"
	MetricAttrCoverTo   = "ct"

	metricBinPrefix = "b"
	metricZeroBin   = "bz"
	metricClosed    = "C#"
	metricTouch     = "T#"
)

// metricCountAttrBefore names the counts stored under another name than
// their kind's before the kinds were one table: items keep them.
var metricCountAttrBefore = map[voiceops.MetricKind]string{voiceops.KindTurnLatency: "turns"}

// MetricCountAttr is the attribute of kind k's count: the kind's name (a
// new kind needs nothing here), but "turns" for turn_latency, as stored
// before the kinds were one table. A kind's name never collides with the
// other attributes (a test holds every kind to it).
func MetricCountAttr(k voiceops.MetricKind) string {
	if a, ok := metricCountAttrBefore[k]; ok {
		return a
	}
	return string(k)
}

// MetricPartition returns the partition key of a scope's items (an
// account's, or with projectID a project's).
func MetricPartition(accountID, projectID string) string {
	if projectID == "" {
		return "M#" + accountID
	}
	return "M#" + accountID + "#" + projectID
}

// MetricScope returns the account and project ("" for the account's own
// scope) of a metric partition key, such as the key of a stream record of
// the metrics table; ok is false for a key of another shape.
func MetricScope(pk string) (accountID, projectID string, ok bool) {
	rest, found := strings.CutPrefix(pk, "M#")
	if !found {
		return "", "", false
	}
	accountID, projectID, _ = strings.Cut(rest, "#")
	if !voiceops.ValidTenantID(accountID) || (projectID != "" && !voiceops.ValidTenantID(projectID)) {
		return "", "", false
	}
	return accountID, projectID, true
}

// MetricMinuteKey is the minute's part of a sort key: its unix seconds in
// MetricMinuteDigits digits, clamped to what that width holds. Alone, it
// sorts before every shard of its minute.
func MetricMinuteKey(t time.Time) string {
	sec := min(max(t.Unix(), 0), metricMaxMinuteSec)
	return fmt.Sprintf("%0*d", MetricMinuteDigits, sec)
}

// MetricShardKey is the sort key of a shard of an open minute.
func MetricShardKey(minute time.Time, shard int) string {
	return MetricMinuteKey(minute) + "#" + strconv.Itoa(shard)
}

// MetricShardsEnd is a sort key after every shard of minute (and every item
// of the layout before), and before the next minute's.
func MetricShardsEnd(minute time.Time) string { return MetricMinuteKey(minute) + "#~" }

// MetricClosedKey is the sort key of a closed minute's item.
func MetricClosedKey(minute time.Time) string { return metricClosed + MetricMinuteKey(minute) }

// MetricItemMinute returns the minute of a shard's or a closed minute's
// sort key (the layout before's too), and whether it is a closed minute's.
func MetricItemMinute(sk string) (minute time.Time, closed bool, err error) {
	rest, closed := strings.CutPrefix(sk, metricClosed)
	digits := rest
	if !closed {
		var ok bool
		if digits, _, ok = strings.Cut(rest, "#"); !ok {
			return time.Time{}, false, fmt.Errorf("metric item %q: malformed sort key", sk)
		}
	}
	sec, err := strconv.ParseInt(digits, 10, 64)
	if len(digits) != MetricMinuteDigits || err != nil {
		return time.Time{}, false, fmt.Errorf("metric item %q: malformed sort key", sk)
	}
	return time.Unix(sec, 0).UTC(), closed, nil
}

// MetricExpiry is when an item of a minute expires (the table's TTL).
func MetricExpiry(minute time.Time) time.Time { return minute.Add(voiceops.MetricMinuteRetention) }

// MetricOpen reports whether writes at now into minute go to a shard: the
// minute is current (or ahead, a producer's clock running fast).
func MetricOpen(minute, now time.Time) bool { return minute.Add(time.Minute).After(now) }

// MetricClosed reports whether minute may be compacted at now: no shard
// write can reach it any more.
func MetricClosed(minute, now time.Time) bool { return !now.Before(minute.Add(MetricClosedAfter)) }

// MetricBinAttr is the attribute of a latency sketch's bin (zero: the zero
// count).
func MetricBinAttr(index int, zero bool) string {
	if zero {
		return metricZeroBin
	}
	return metricBinPrefix + strconv.Itoa(index)
}

// MetricBin reports whether attribute name holds a sketch bin, and which.
func MetricBin(name string) (index int, zero, ok bool) {
	if name == metricZeroBin {
		return 0, true, true
	}
	rest, found := strings.CutPrefix(name, metricBinPrefix)
	if !found {
		return 0, false, false
	}
	i, err := strconv.Atoi(rest)
	return i, false, err == nil
}

// MetricNumber is one number a write adds to a minute: a count or a bin.
type MetricNumber struct {
	Attr  string
	Value string // a DynamoDB number
}

// MetricUpdater is the call a metric write makes.
type MetricUpdater interface {
	UpdateItem(ctx context.Context, params *dynamodb.UpdateItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error)
}

// metricTermsPerUpdate bounds the numbers of one UpdateItem, whose
// expression may hold at most 4 KB (about 10 bytes a number).
const metricTermsPerUpdate = 300

// addRetryer retries a metric write only on throttling, when DynamoDB
// certainly did not apply it: an ADD is not idempotent, so a write whose
// answer was lost (a connection error, a 500, a bad checksum) is not sent
// again, lest it count twice; the caller gets the error.
var addRetryer = retry.NewStandard(func(o *retry.StandardOptions) {
	o.Retryables = []retry.IsErrorRetryable{retry.RetryableErrorCode{Codes: retry.DefaultThrottleErrorCodes}}
})

// AddMetrics adds the numbers to a scope's minute, as of now: into a
// random shard while the minute is open, else into its closed item. One
// UpdateItem (a sketch wider than 300 bins takes more: a reader may then
// see part of the write for a moment). It is applied at most once (see
// addRetryer): a caller that retries after an error may count it twice
// (at least once, never lost), as with every write before this layout.
func AddMetrics(ctx context.Context, db MetricUpdater, table, pk string, minute, now time.Time, numbers []MetricNumber) error {
	sk := MetricClosedKey(minute)
	if MetricOpen(minute, now) {
		sk = MetricShardKey(minute, rand.IntN(MetricShards))
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, MetricWriteTimeout)
		defer cancel()
	}
	for first := true; first || len(numbers) > 0; first = false {
		part := numbers[:min(len(numbers), metricTermsPerUpdate)]
		numbers = numbers[len(part):]
		names := map[string]string{"#ttl": metricAttrTTL, "#v": MetricAttrVersion}
		values := map[string]types.AttributeValue{":ttl": avN(MetricExpiry(minute).Unix()), ":one": avN(1)}
		var expr strings.Builder
		expr.WriteString("SET #ttl = :ttl ADD #v :one")
		for i, n := range part {
			fmt.Fprintf(&expr, ", #%d :%d", i, i)
			names["#"+strconv.Itoa(i)] = n.Attr
			values[":"+strconv.Itoa(i)] = &types.AttributeValueMemberN{Value: n.Value}
		}
		_, err := db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName:                 aws.String(table),
			Key:                       item{metricAttrPK: avS(pk), metricAttrSK: avS(sk)},
			UpdateExpression:          aws.String(expr.String()),
			ExpressionAttributeNames:  names,
			ExpressionAttributeValues: values,
		}, func(o *dynamodb.Options) { o.Retryer = addRetryer })
		if err != nil {
			return wrap("AddMetrics", err)
		}
	}
	return nil
}

// MetricTouchKey is the sort key of a new touch item.
func MetricTouchKey() string { return metricTouch + voiceops.RandomBase62(16) }

// Key attributes of the metrics table.
var (
	metricAttrPK  = tables.Metrics.PartitionKey
	metricAttrSK  = tables.Metrics.SortKey
	metricAttrTTL = tables.Metrics.TTLAttribute
)
