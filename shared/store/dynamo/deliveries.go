package dynamo

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/voiceops/opsapi/shared/voiceops"
)

// A delivery is one item (layout in events.go): its attempts are a list in
// the item, and attempt_count, their number, is the condition of every
// RecordAttempt. The endpoint's log is the index partition of its
// deliveries, sorted by creation time, read newest first.

func deliveryPK(accountID, endpointID string) string {
	return pkDelivery + accountID + "#" + endpointID
}

func deliveryKey(accountID, endpointID, deliveryID string) item {
	return key(deliveryPK(accountID, endpointID), deliveryID)
}

func encodeDelivery(d voiceops.Delivery) item {
	it := deliveryKey(d.AccountID, d.EndpointID, d.ID)
	it[attrID] = avS(d.ID)
	it[attrAccountID] = avS(d.AccountID)
	it[attrEndpointID] = avS(d.EndpointID)
	it[attrEventID] = avS(d.EventID)
	it[attrType] = avS(string(d.EventType))
	it[attrTest] = avB(d.Test)
	it[attrStatus] = avS(string(d.Status))
	attempts := make([]types.AttributeValue, len(d.Attempts))
	for i, a := range d.Attempts {
		m := item{
			attrAttemptNumber: avN(int64(a.Number)),
			attrAttemptAt:     avT(a.At),
			attrStatusCode:    avN(int64(a.StatusCode)),
			attrDurationMS:    avN(a.DurationMS),
		}
		setNonEmpty(m, attrError, a.Error)
		attempts[i] = &types.AttributeValueMemberM{Value: m}
	}
	it[attrAttempts] = &types.AttributeValueMemberL{Value: attempts}
	it[attrAttemptCount] = avN(int64(len(d.Attempts)))
	setOpt(it, attrNextAttemptAt, d.NextAttemptAt, avT)
	it[attrCreatedAt] = avT(d.CreatedAt)
	it[attrUpdatedAt] = avT(d.UpdatedAt)
	it[attrTTL] = expiresAt(d.CreatedAt)
	it[attrDlvGSI1PK] = avS(deliveryPK(d.AccountID, d.EndpointID))
	it[attrDlvGSI1SK] = avS(sortKeyTime(d.CreatedAt) + "#" + d.ID)
	return it
}

func decodeDelivery(it item) (voiceops.Delivery, error) {
	r := reader{it: it}
	d := voiceops.Delivery{
		ID: r.str(attrID), AccountID: r.str(attrAccountID), EndpointID: r.str(attrEndpointID), EventID: r.str(attrEventID),
		EventType: voiceops.EventType(r.str(attrType)), Test: r.boolean(attrTest), Status: voiceops.DeliveryStatus(r.str(attrStatus)),
		NextAttemptAt: r.optTime(attrNextAttemptAt), CreatedAt: r.time(attrCreatedAt), UpdatedAt: r.time(attrUpdatedAt),
	}
	if l, ok := it[attrAttempts].(*types.AttributeValueMemberL); ok {
		// No attempts read back as none (nil), as written and as memory keeps them.
		for _, v := range l.Value {
			m, ok := v.(*types.AttributeValueMemberM)
			if !ok {
				r.fail(attrAttempts, "want a list of maps, got a %T in it", v)
				break
			}
			ar := reader{it: m.Value}
			d.Attempts = append(d.Attempts, voiceops.DeliveryAttempt{
				Number: int(ar.num(attrAttemptNumber)), At: ar.time(attrAttemptAt), StatusCode: int(ar.num(attrStatusCode)),
				DurationMS: ar.num(attrDurationMS), Error: ar.str(attrError),
			})
			if ar.err != nil && r.err == nil {
				r.err = ar.err
			}
		}
	} else if r.present(attrAttempts) {
		r.fail(attrAttempts, "want a list, got %T", it[attrAttempts])
	}
	return d, r.err
}

// CreateDeliveries is one transaction of conditional Puts per 100
// deliveries. Those whose condition fails exist already: the transaction is
// written again without them.
func (s *Deliveries) CreateDeliveries(ctx context.Context, ds []voiceops.Delivery) error {
	for len(ds) > 0 {
		chunk := ds[:min(len(ds), 100)]
		ds = ds[len(chunk):]
		for len(chunk) > 0 {
			writes := make([]types.TransactWriteItem, len(chunk))
			for i, dl := range chunk {
				writes[i] = s.txPutNew(encodeDelivery(dl))
			}
			o, err := s.transact(ctx, "CreateDeliveries", writes)
			if err != nil {
				return err
			}
			if o.ok() {
				break
			}
			var rest []voiceops.Delivery
			for i, dl := range chunk {
				if !o.failed[i] {
					rest = append(rest, dl)
				}
			}
			chunk = rest
		}
	}
	return nil
}

// GetDelivery is one GetItem.
func (s *Deliveries) GetDelivery(ctx context.Context, accountID, endpointID, deliveryID string) (voiceops.Delivery, error) {
	it, found, err := s.get(ctx, "GetDelivery", deliveryKey(accountID, endpointID, deliveryID))
	if err != nil || !found {
		return voiceops.Delivery{}, notFound(err)
	}
	dl, err := decodeDelivery(it)
	if err != nil {
		return voiceops.Delivery{}, wrap("GetDelivery", err)
	}
	return dl, nil
}

// ListDeliveries is one Query of the endpoint's index partition, newest
// first, bounded below by the TTL (more calls only past 1 MB).
func (s *Deliveries) ListDeliveries(ctx context.Context, accountID, endpointID string, limit int) ([]voiceops.Delivery, error) {
	if limit <= 0 {
		return nil, nil
	}
	// Created after now-TTL: the expired items that TTL has not deleted yet
	// are left out by the key condition itself (and by queryLimit at the
	// very edge).
	lo := sortKeyTime(s.now().Add(-voiceops.DeliveryLogTTL))
	items, err := s.queryLimit(ctx, "ListDeliveries", &dynamodb.QueryInput{
		TableName:                 &s.table,
		IndexName:                 aws.String(deliveriesIndex.Name),
		KeyConditionExpression:    aws.String("#pk = :pk AND #sk >= :lo"),
		ExpressionAttributeNames:  map[string]string{"#pk": attrDlvGSI1PK, "#sk": attrDlvGSI1SK},
		ExpressionAttributeValues: item{":pk": avS(deliveryPK(accountID, endpointID)), ":lo": avS(lo)},
		ScanIndexForward:          aws.Bool(false),
	}, limit)
	if err != nil {
		return nil, err
	}
	out := make([]voiceops.Delivery, 0, len(items))
	for _, it := range items {
		dl, err := decodeDelivery(it)
		if err != nil {
			return nil, wrap("ListDeliveries", err)
		}
		out = append(out, dl)
	}
	return out, nil
}

// RecordAttempt is one PutItem conditional on attempt_count.
func (s *Deliveries) RecordAttempt(ctx context.Context, dl voiceops.Delivery, expectAttempts int) error {
	_, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: &s.table, Item: encodeDelivery(dl),
		ConditionExpression:                 aws.String("#count = :expect"),
		ExpressionAttributeNames:            map[string]string{"#count": attrAttemptCount},
		ExpressionAttributeValues:           item{":expect": avN(int64(expectAttempts))},
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	if old, ok := conditionFailed(err); ok {
		if len(old) == 0 || Expired(old, s.now()) {
			return voiceops.ErrNotFound
		}
		return voiceops.ErrConflictingWrite
	}
	if err != nil {
		return wrap("RecordAttempt", err)
	}
	return nil
}
