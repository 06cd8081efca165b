package dynamo

import (
	"context"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/voiceops/opsapi/shared/voiceops"
)

// Pacer hands out per-account dialing slots from one item per account on
// the calls table (see calls.go): every dialer instance reserves from the
// same item, so the account's rate holds across instances. Slots are whole
// milliseconds.
type Pacer struct{ store }

// NewPacer returns the pacer on the calls table named table.
func NewPacer(db DB, table string) *Pacer { return &Pacer{newStore(db, table)} }

var _ voiceops.Pacer = (*Pacer)(nil)

const (
	pkPace       = "PACE#"
	skPace       = "P"
	attrNextAt   = "next_at"     // unix ms of the next free slot
	attrInterval = "interval_ms" // ms between slots; absent: the default rate
	// attrRate ("rate", requests.go): calls per second, as the operator set it.
)

func paceKey(accountID string) item { return key(pkPace+accountID, skPace) }

// ReserveSlot takes the account's next slot in at most two atomic writes,
// never a read-then-write loop, so that any number of dialers reserving at
// once all succeed:
//
//  1. an idle account (no slot, or its next slot already past) starts now:
//     next_at = now + interval, if next_at is absent or <= now;
//  2. otherwise the slot is next_at, moved on by one interval in the same
//     write (next_at = next_at + interval), which returns the old value.
//
// The interval is the item's own (SetRate), so a write needs no read. A
// slot that passed between the two writes is handed out anyway: it is at
// most milliseconds old.
func (p *Pacer) ReserveSlot(ctx context.Context, accountID string, now time.Time) (time.Time, error) {
	nowMS := now.UnixMilli()
	names := map[string]string{"#next": attrNextAt, "#interval": attrInterval}
	def := avN(voiceops.SlotInterval(0).Milliseconds())
	_, err := p.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: &p.table, Key: paceKey(accountID),
		UpdateExpression:          aws.String("SET #next = :now + if_not_exists(#interval, :def)"),
		ConditionExpression:       aws.String("attribute_not_exists(#next) OR #next <= :now"),
		ExpressionAttributeNames:  names,
		ExpressionAttributeValues: item{":now": avN(nowMS), ":def": def},
	})
	if err == nil {
		return time.UnixMilli(nowMS).UTC(), nil
	}
	if _, busy := conditionFailed(err); !busy {
		return time.Time{}, wrap("ReserveSlot", err)
	}
	out, err := p.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: &p.table, Key: paceKey(accountID),
		UpdateExpression:          aws.String("SET #next = #next + if_not_exists(#interval, :def)"),
		ExpressionAttributeNames:  names,
		ExpressionAttributeValues: item{":def": def},
		ReturnValues:              types.ReturnValueUpdatedOld,
	})
	if err != nil {
		return time.Time{}, wrap("ReserveSlot", err)
	}
	r := reader{it: out.Attributes}
	next := r.num(attrNextAt)
	if r.err != nil {
		return time.Time{}, wrap("ReserveSlot", r.err)
	}
	return time.UnixMilli(next).UTC(), nil
}

// SetRate sets the account's outbound rate in calls per second (0: back
// to the default). The operator's command (opsctl outbound rate).
func (p *Pacer) SetRate(ctx context.Context, accountID string, rate float64) error {
	in := &dynamodb.UpdateItemInput{TableName: &p.table, Key: paceKey(accountID),
		ExpressionAttributeNames: map[string]string{"#rate": attrRate, "#interval": attrInterval}}
	if rate <= 0 {
		in.UpdateExpression = aws.String("REMOVE #rate, #interval")
	} else {
		in.UpdateExpression = aws.String("SET #rate = :rate, #interval = :interval")
		in.ExpressionAttributeValues = item{
			":rate":     &types.AttributeValueMemberN{Value: strconv.FormatFloat(rate, 'f', -1, 64)},
			":interval": avN(max(voiceops.SlotInterval(rate).Milliseconds(), 1)),
		}
	}
	if _, err := p.db.UpdateItem(ctx, in); err != nil {
		return wrap("SetRate", err)
	}
	return nil
}
