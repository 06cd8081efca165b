package metricstore

import (
	"context"
	"errors"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/voiceops/opsapi/shared/metrics"
	"github.com/voiceops/opsapi/shared/metrics/buckets"
	"github.com/voiceops/opsapi/shared/store/dynamo"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// The hourly roll-ups (shared/metrics/series) live in the scope's partition of the
// metrics table, beside its minutes, one item per hour:
//
//	pk=M#<account>[#<project>]   sk=H#<hour: 10-digit unix seconds>
//	attributes: those of a closed minute's item (metriclayout.go: counts
//	and the sketch's bins), expires_at = hour + 30 days
//
// "H#" sorts after every minute key (digits), so the minutes' reads never
// see a roll-up. The key is the hour itself: rolling an hour up again
// replaces its item. Like any insert into the table, a new roll-up wakes
// the evaluator for its scope once (harmless: the scope is evaluated).

// rollupPrefix starts the sort key of every roll-up; closedPrefix that of a
// closed minute (dynamo.MetricClosedKey), whose decoder reads roll-ups.
const (
	rollupPrefix = "H#"
	closedPrefix = "C#"
)

// Rollups is the roll-up store on the metrics table (the series.HourStore
// that storetest.RunRollups holds it to).
type Rollups struct {
	db    DB
	table string
	now   func() time.Time
}

// NewRollups returns the roll-up store on the metrics table named table.
func NewRollups(db DB, table string) *Rollups { return &Rollups{db: db, table: table, now: time.Now} }

func rollupKey(hour time.Time) string { return rollupPrefix + dynamo.MetricMinuteKey(hour) }

// PutHours writes one item per roll-up (a PutItem each: an hour's run
// writes a few per scope), in the closed minutes' attribute format.
func (r *Rollups) PutHours(ctx context.Context, hs []buckets.Bucket) error {
	for _, h := range hs { // all or nothing: a refused call stores none
		if err := h.Check(); err != nil {
			return err
		}
	}
	now := r.now()
	for _, h := range hs {
		expires := h.Minute.Add(voiceops.MetricHourRetention)
		if !expires.After(now) {
			continue
		}
		it := item{
			attrMetricPK:  avS(Partition(h.Scope)),
			attrMetricSK:  avS(rollupKey(h.Minute)),
			attrMetricTTL: avN(expires.Unix()),
		}
		for _, n := range numbers(h) {
			it[n.Attr] = &types.AttributeValueMemberN{Value: n.Value}
		}
		if _, err := r.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &r.table, Item: it}); err != nil {
			return wrap("PutHours", err)
		}
	}
	return nil
}

// ReadHours is one Query of the scope's roll-up keys in [from, to).
func (r *Rollups) ReadHours(ctx context.Context, s metrics.Scope, from, to time.Time) ([]buckets.Bucket, error) {
	lo, hi := metricCeilMinute(from), metricCeilMinute(to)
	out := []buckets.Bucket{}
	if !lo.Before(hi) {
		return out, nil
	}
	in := &dynamodb.QueryInput{
		TableName:                 &r.table,
		KeyConditionExpression:    aws.String("#pk = :pk AND #sk BETWEEN :lo AND :hi"),
		ExpressionAttributeNames:  map[string]string{"#pk": attrMetricPK, "#sk": attrMetricSK},
		ExpressionAttributeValues: item{":pk": avS(Partition(s)), ":lo": avS(rollupKey(lo)), ":hi": avS(rollupKey(hi))},
	}
	now := r.now()
	for {
		res, err := r.db.Query(ctx, in)
		if err != nil {
			return nil, wrap("ReadHours", err)
		}
		for _, it := range res.Items {
			if dynamo.Expired(it, now) {
				continue
			}
			// The closed minutes' decoder reads the attributes; it wants
			// a closed minute's sort key, which the roll-up's hour makes.
			sk, _ := it[attrMetricSK].(*types.AttributeValueMemberS)
			if sk == nil || len(sk.Value) != len(rollupPrefix)+dynamo.MetricMinuteDigits {
				return nil, wrap("ReadHours", errMalformedRollup)
			}
			c := make(item, len(it))
			for k, v := range it {
				c[k] = v
			}
			c[attrMetricSK] = avS(closedPrefix + sk.Value[len(rollupPrefix):])
			b, _, err := decodeMetricItem(s, c)
			if err != nil {
				return nil, wrap("ReadHours", err)
			}
			if b.Minute.Before(to) {
				out = append(out, b)
			}
		}
		if len(res.LastEvaluatedKey) == 0 {
			return out, nil
		}
		in.ExclusiveStartKey = res.LastEvaluatedKey
	}
}

var errMalformedRollup = errors.New("malformed roll-up sort key")
