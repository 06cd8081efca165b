package dynamo

import (
	"context"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/voiceops/opsapi/shared/voiceops"
)

// The evaluator's marks (voiceops.EvaluationStore) are items of the
// account's partition of the config table, one per scope:
//
//	pk=ACCT#<account>  sk=EVAL#<project, or "" for the account-wide rules>
//	evaluated_ms (number: unix milliseconds), expires_at
//
// An evaluation that changes no rule of a scope writes this one item
// instead of one per rule. The API reads the account's marks beside a
// rule or the list of rules (one more Query, in parallel with the rules').
const (
	skMark          = "EVAL#"
	attrEvaluatedMS = "evaluated_ms"
	// markTTL: a scope whose rules are all disabled or deleted stops being
	// marked; its mark goes after a day. An enabled rule's scope is marked
	// every minute.
	markTTL = 24 * time.Hour
)

var _ voiceops.EvaluationStore = (*Config)(nil)

func markKey(accountID, projectID string) item { return key(pkAccount+accountID, skMark+projectID) }

// MarkEvaluated is one conditional UpdateItem: it keeps the later mark.
func (s *Config) MarkEvaluated(ctx context.Context, accountID, projectID string, at time.Time) error {
	ms := at.UnixMilli()
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 &s.table,
		Key:                       markKey(accountID, projectID),
		UpdateExpression:          aws.String("SET #at = :at, #exp = :exp"),
		ConditionExpression:       aws.String("attribute_not_exists(#at) OR #at < :at"),
		ExpressionAttributeNames:  map[string]string{"#at": attrEvaluatedMS, "#exp": attrTTL},
		ExpressionAttributeValues: item{":at": avN(ms), ":exp": avN(s.now().Add(markTTL).Unix())},
	})
	if _, lost := conditionFailed(err); lost {
		return nil // a later evaluation marked first
	}
	if err != nil {
		return wrap("MarkEvaluated", err)
	}
	return nil
}

// Mark is one GetItem.
func (s *Config) Mark(ctx context.Context, accountID, projectID string) (time.Time, error) {
	it, found, err := s.get(ctx, "Mark", markKey(accountID, projectID))
	if err != nil || !found {
		return time.Time{}, err
	}
	return decodeMark(it), nil
}

// Marks is one Query.
func (s *Config) Marks(ctx context.Context, accountID string) (map[string]time.Time, error) {
	items, err := s.queryPrefix(ctx, "Marks", pkAccount+accountID, skMark)
	if err != nil {
		return nil, err
	}
	out := make(map[string]time.Time, len(items))
	for _, it := range items {
		r := reader{it: it}
		out[r.str(attrSK)[len(skMark):]] = decodeMark(it)
	}
	return out, nil
}

func decodeMark(it item) time.Time {
	r := reader{it: it}
	if !r.present(attrEvaluatedMS) {
		return time.Time{}
	}
	return time.UnixMilli(r.num(attrEvaluatedMS)).UTC()
}
