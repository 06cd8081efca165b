package dynamo

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/voiceops/opsapi/shared/voiceops"
)

// Pacer hands out per-account dialing slots from one item per account on
// the calls table (see calls.go): every dialer instance reserves from the
// same item, so the account's rate holds across instances.
type Pacer struct{ store }

// NewPacer returns the pacer on the calls table named table.
func NewPacer(db DB, table string) *Pacer { return &Pacer{newStore(db, table)} }

var _ voiceops.Pacer = (*Pacer)(nil)

const (
	pkPace     = "PACE#"
	skPace     = "P"
	attrNextAt = "next_at"
	attrRate   = "rate"
	// paceAttempts bounds the reservations lost to other dialers in a row.
	paceAttempts = 20
)

func paceKey(accountID string) item { return key(pkPace+accountID, skPace) }

// ReserveSlot reads the account's next free slot and rate, then moves the
// slot on with a write conditioned on the value it read: two dialers never
// get the same slot, and the loser reads again.
func (p *Pacer) ReserveSlot(ctx context.Context, accountID string, now time.Time) (time.Time, error) {
	for range paceAttempts {
		out, err := p.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &p.table, Key: paceKey(accountID), ConsistentRead: aws.Bool(true)})
		if err != nil {
			return time.Time{}, wrap("ReserveSlot", err)
		}
		r := reader{it: out.Item}
		old := r.optNum(attrNextAt)
		rate := 0.0
		if n, ok := out.Item[attrRate].(*types.AttributeValueMemberN); ok {
			if rate, err = strconv.ParseFloat(n.Value, 64); err != nil {
				return time.Time{}, wrap("ReserveSlot", fmt.Errorf("rate of account %s: %w", accountID, err))
			}
		}
		if r.err != nil {
			return time.Time{}, wrap("ReserveSlot", r.err)
		}
		slot := now.Truncate(time.Millisecond)
		if old != nil && time.UnixMilli(*old).After(slot) {
			slot = time.UnixMilli(*old).UTC()
		}
		next := slot.Add(voiceops.SlotInterval(rate)).UnixMilli()
		in := &dynamodb.UpdateItemInput{
			TableName: &p.table, Key: paceKey(accountID),
			UpdateExpression:          aws.String("SET #next = :next"),
			ExpressionAttributeNames:  map[string]string{"#next": attrNextAt},
			ExpressionAttributeValues: item{":next": avN(next)},
		}
		if old == nil {
			in.ConditionExpression = aws.String("attribute_not_exists(#next)")
		} else {
			in.ConditionExpression = aws.String("#next = :old")
			in.ExpressionAttributeValues[":old"] = avN(*old)
		}
		_, err = p.db.UpdateItem(ctx, in)
		if _, lost := conditionFailed(err); lost {
			continue
		}
		if err != nil {
			return time.Time{}, wrap("ReserveSlot", err)
		}
		return slot, nil
	}
	return time.Time{}, wrap("ReserveSlot", fmt.Errorf("account %s: %d reservations lost in a row", accountID, paceAttempts))
}

// SetRate sets the account's outbound rate in calls per second (0: back
// to the default). The operator's command (opsctl outbound rate).
func (p *Pacer) SetRate(ctx context.Context, accountID string, rate float64) error {
	in := &dynamodb.UpdateItemInput{TableName: &p.table, Key: paceKey(accountID), ExpressionAttributeNames: map[string]string{"#rate": attrRate}}
	if rate <= 0 {
		in.UpdateExpression = aws.String("REMOVE #rate")
	} else {
		in.UpdateExpression = aws.String("SET #rate = :rate")
		in.ExpressionAttributeValues = item{":rate": &types.AttributeValueMemberN{Value: strconv.FormatFloat(rate, 'f', -1, 64)}}
	}
	if _, err := p.db.UpdateItem(ctx, in); err != nil {
		return wrap("SetRate", err)
	}
	return nil
}
