package dynamo

import (
	"context"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/voiceops/opsapi/shared/platform/tables"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// Deliveries is the store of the deliveries table: alert events and their
// deliveries (the event store and the delivery store of the domain).
type Deliveries struct{ store }

// NewDeliveries returns the store of the deliveries table named table.
func NewDeliveries(db DB, table string) *Deliveries { return &Deliveries{newStore(db, table)} }

var (
	_ voiceops.EventStore    = (*Deliveries)(nil)
	_ voiceops.DeliveryStore = (*Deliveries)(nil)
)

// Alert events live in the deliveries table, next to their deliveries:
//
//	event     pk=EVT#<acct>             sk=<event_id>
//	          while not fanned out:     gsi1pk=OUTBOX#<shard 00-15> gsi1sk=<created_at>#<event_id>
//	delivery  pk=DLV#<acct>#<endpoint>  sk=<delivery_id>
//	          always:                   gsi1pk=DLV#<acct>#<endpoint> gsi1sk=<created_at>#<delivery_id>
//
// The outbox index entries are sparse: MarkFannedOut removes them, so
// PendingEvents reads only the events still to fan out, with one Query per
// shard. Times in index sort keys have a fixed width (sortableTime), so
// string order is time order. Both kinds expire DeliveryLogTTL after their
// creation (the TTL attribute), and reads ignore expired items.

// Attributes of events and deliveries.
const (
	attrBody          = "body"
	attrType          = "type"
	attrRuleID        = "rule_id"
	attrEndpointID    = "endpoint_id"
	attrEventID       = "event_id"
	attrTest          = "test"
	attrStatus        = "status"
	attrAttempts      = "attempts"
	attrAttemptCount  = "attempt_count"
	attrNextAttemptAt = "next_attempt_at"

	attrAttemptNumber = "n"
	attrAttemptAt     = "at"
	attrStatusCode    = "status_code"
	attrDurationMS    = "duration_ms"
	attrError         = "error"
)

// Key prefixes of the deliveries table.
const (
	pkEvent      = "EVT#"
	pkDelivery   = "DLV#"
	outboxPrefix = "OUTBOX#"
)

// Index and attribute names of the deliveries table.
var (
	deliveriesIndex = tables.Deliveries.GSIs[0]
	attrDlvGSI1PK   = deliveriesIndex.PartitionKey
	attrDlvGSI1SK   = deliveriesIndex.SortKey
)

// OutboxShards is how many index partitions pending events spread over, so
// that a burst of events never writes one partition only.
const OutboxShards = 16

// OutboxShardKey returns the outbox index partition of shard (0 to
// OutboxShards-1): "OUTBOX#00" to "OUTBOX#15".
func OutboxShardKey(shard int) string { return fmt.Sprintf("%s%02d", outboxPrefix, shard) }

// outboxShardOf spreads events by the FNV-32a hash of their ID.
func outboxShardOf(eventID string) int {
	h := fnv.New32a()
	_, _ = h.Write([]byte(eventID))
	return int(h.Sum32() % OutboxShards)
}

// sortableTime is a time in UTC with a fixed number of digits, so that
// sort keys order like times (RFC3339Nano drops trailing zeros).
const sortableTime = "2006-01-02T15:04:05.000000000Z"

func sortKeyTime(t time.Time) string { return t.UTC().Format(sortableTime) }

func eventKey(accountID, eventID string) item { return key(pkEvent+accountID, eventID) }

func avBytes(b []byte) types.AttributeValue { return &types.AttributeValueMemberB{Value: b} }

// expiresAt is the TTL attribute of a record created at t.
func expiresAt(t time.Time) types.AttributeValue {
	return avN(t.Add(voiceops.DeliveryLogTTL).Unix())
}

// encodeEvent returns the item of an event; a pending one carries the
// outbox index attributes.
func encodeEvent(e voiceops.AlertEvent) item {
	it := eventKey(e.AccountID, e.ID)
	it[attrID] = avS(e.ID)
	it[attrAccountID] = avS(e.AccountID)
	setNonEmpty(it, attrRuleID, e.RuleID)
	setNonEmpty(it, attrEndpointID, e.EndpointID)
	it[attrType] = avS(string(e.Type))
	it[attrCreatedAt] = avT(e.CreatedAt)
	it[attrBody] = avBytes(e.Body)
	it[attrTTL] = expiresAt(e.CreatedAt)
	if !e.FannedOut {
		it[attrDlvGSI1PK] = avS(OutboxShardKey(outboxShardOf(e.ID)))
		it[attrDlvGSI1SK] = avS(sortKeyTime(e.CreatedAt) + "#" + e.ID)
	}
	return it
}

func decodeEvent(it item) (voiceops.AlertEvent, error) {
	r := reader{it: it}
	e := voiceops.AlertEvent{
		ID: r.str(attrID), AccountID: r.str(attrAccountID), RuleID: r.str(attrRuleID), EndpointID: r.str(attrEndpointID),
		Type: voiceops.EventType(r.str(attrType)), CreatedAt: r.time(attrCreatedAt), Body: r.bytes(attrBody),
		FannedOut: !r.present(attrDlvGSI1PK),
	}
	return e, r.err
}

func (r *reader) bytes(name string) []byte {
	b, ok := r.it[name].(*types.AttributeValueMemberB)
	if !ok {
		r.fail(name, "want binary, got %T", r.it[name])
		return nil
	}
	return b.Value
}

// eventPut is the Put of a new event in table (the deliveries table),
// conditional on no event with its ID existing. RuleStore writes add it to
// the transaction of the rule's state change, so the change and its event
// are written together or not at all (the outbox).
func eventPut(table string, e voiceops.AlertEvent) *types.Put {
	return &types.Put{
		TableName: aws.String(table), Item: encodeEvent(e),
		ConditionExpression: aws.String(condNew), ExpressionAttributeNames: namePK,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld, // see applied
	}
}

// PutEvent is one conditional PutItem: ErrAlreadyExists when the ID
// exists. With deliveries, it is one transaction of the event's Put and a
// conditional Put per delivery.
func (s *Deliveries) PutEvent(ctx context.Context, e voiceops.AlertEvent, ds ...voiceops.Delivery) error {
	if len(ds) > 0 {
		return s.putEventWith(ctx, e, ds)
	}
	p := eventPut(s.table, e)
	_, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: p.TableName, Item: p.Item, ConditionExpression: p.ConditionExpression,
		ExpressionAttributeNames:            p.ExpressionAttributeNames,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	if old, ok := conditionFailed(err); ok {
		if sameItem(old, p.Item) { // an earlier attempt of this call was applied (see applied)
			return nil
		}
		return voiceops.ErrAlreadyExists
	}
	if err != nil {
		return wrap("PutEvent", err)
	}
	return nil
}

// putEventWith writes an event and its deliveries in one transaction.
func (s *Deliveries) putEventWith(ctx context.Context, e voiceops.AlertEvent, ds []voiceops.Delivery) error {
	if len(ds) > voiceops.MaxEventDeliveries {
		return wrap("PutEvent", fmt.Errorf("%d deliveries with event %s: at most %d", len(ds), e.ID, voiceops.MaxEventDeliveries))
	}
	const event = 0
	writes := []types.TransactWriteItem{event: {Put: eventPut(s.table, e)}}
	for _, d := range ds {
		writes = append(writes, s.txPutNew(encodeDelivery(d)))
	}
	o, err := s.transact(ctx, "PutEvent", writes)
	switch {
	case err != nil:
		return err
	case o.failed[event]:
		return voiceops.ErrAlreadyExists
	case !o.ok():
		// A delivery's ID derives from its event's: one without the event
		// is no fan-out of this new event's.
		return wrap("PutEvent", fmt.Errorf("a delivery of the new event %s already exists", e.ID))
	}
	return nil
}

// GetEvent is one GetItem.
func (s *Deliveries) GetEvent(ctx context.Context, accountID, eventID string) (voiceops.AlertEvent, error) {
	it, found, err := s.get(ctx, "GetEvent", eventKey(accountID, eventID))
	if err != nil || !found {
		return voiceops.AlertEvent{}, notFound(err)
	}
	e, err := decodeEvent(it)
	if err != nil {
		return voiceops.AlertEvent{}, wrap("GetEvent", err)
	}
	return e, nil
}

// PendingEvents is one Query per outbox shard (OutboxShards, run at once),
// each reading at most limit of the shard's oldest pending events created
// in the last DeliveryLogTTL; the merge keeps the oldest limit.
func (s *Deliveries) PendingEvents(ctx context.Context, createdBefore time.Time, limit int) ([]voiceops.AlertEvent, error) {
	if limit <= 0 {
		return nil, nil
	}
	lo := sortKeyTime(s.now().Add(-voiceops.DeliveryLogTTL))
	hi := sortKeyTime(createdBefore) + "$" // '$' sorts after the '#' that ends the time
	var (
		wg      sync.WaitGroup
		results = make([][]item, OutboxShards)
		errs    = make([]error, OutboxShards)
	)
	for shard := range OutboxShards {
		wg.Go(func() {
			results[shard], errs[shard] = s.queryLimit(ctx, "PendingEvents", &dynamodb.QueryInput{
				TableName:                 &s.table,
				IndexName:                 aws.String(deliveriesIndex.Name),
				KeyConditionExpression:    aws.String("#pk = :pk AND #sk BETWEEN :lo AND :hi"),
				ExpressionAttributeNames:  map[string]string{"#pk": attrDlvGSI1PK, "#sk": attrDlvGSI1SK},
				ExpressionAttributeValues: item{":pk": avS(OutboxShardKey(shard)), ":lo": avS(lo), ":hi": avS(hi)},
			}, limit)
		})
	}
	wg.Wait()
	var out []voiceops.AlertEvent
	for shard := range OutboxShards {
		if errs[shard] != nil {
			return nil, errs[shard]
		}
		for _, it := range results[shard] {
			e, err := decodeEvent(it)
			if err != nil {
				return nil, wrap("PendingEvents", err)
			}
			out = append(out, e)
		}
	}
	sortEventsOldestFirst(out)
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// sortEventsOldestFirst orders events by creation time, then ID.
func sortEventsOldestFirst(es []voiceops.AlertEvent) {
	slices.SortFunc(es, func(a, b voiceops.AlertEvent) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
}

// queryLimit returns up to limit live items of a query, reading pages with
// Limit set until it has them or the query ends.
func (s *store) queryLimit(ctx context.Context, op string, in *dynamodb.QueryInput, limit int) ([]item, error) {
	var items []item
	now := s.now()
	for {
		in.Limit = aws.Int32(int32(min(limit-len(items), 1000)))
		out, err := s.db.Query(ctx, in)
		if err != nil {
			return nil, wrap(op, err)
		}
		for _, it := range out.Items {
			if !Expired(it, now) {
				items = append(items, it)
			}
		}
		if len(items) >= limit || len(out.LastEvaluatedKey) == 0 {
			return items, nil
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
}

// MarkFannedOut is one UpdateItem removing the outbox index attributes;
// marking twice is harmless.
func (s *Deliveries) MarkFannedOut(ctx context.Context, accountID, eventID string) error {
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: &s.table, Key: eventKey(accountID, eventID),
		UpdateExpression:         aws.String("REMOVE #g1pk, #g1sk"),
		ConditionExpression:      aws.String(condExists),
		ExpressionAttributeNames: map[string]string{"#pk": attrPK, "#g1pk": attrDlvGSI1PK, "#g1sk": attrDlvGSI1SK},
	})
	if _, ok := conditionFailed(err); ok {
		return voiceops.ErrNotFound
	}
	if err != nil {
		return wrap("MarkFannedOut", err)
	}
	return nil
}
