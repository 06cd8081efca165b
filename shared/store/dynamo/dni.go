package dynamo

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/voiceops/opsapi/shared/voiceops"
)

// A project's DNI pool lives in the configuration table, one item per
// number, in a partition of its own (so that reserving reads the pool in
// one Query):
//
//	dni number  pk=ACCT#<acct>#DNI#<project>  sk=NUM#<e164>
//	            hold_ms, and while reserved: reserved_until (unix ms),
//	            attributes (JSON), reserved_at
//
// A number is free when it has no reserved_until or it is not after now.
// Reserve takes a free number with a conditional UpdateItem (the condition
// repeats "free"), so two concurrent reservations never get the same
// number; Consume removes the reservation under the condition that it is
// still live, returning the old attributes.
const (
	pkDNI            = "#DNI#"
	skDNINumber      = "NUM#"
	attrDNINumber    = "number"
	attrDNIProjectID = "project_id"
	attrDNIHold      = "hold_ms"
	attrDNIUntil     = "reserved_until"
	attrDNIAt        = "reserved_at"
	attrDNIAttrs     = "attributes"
)

func dniPK(accountID, projectID string) string { return pkAccount + accountID + pkDNI + projectID }

func dniKey(accountID, projectID, number string) item {
	return key(dniPK(accountID, projectID), skDNINumber+number)
}

// DNI returns the store of the projects' DNI pools.
func (s *Config) DNI() voiceops.DNIStore { return dniStore{s} }

type dniStore struct{ s *Config }

var _ voiceops.DNIStore = dniStore{}

// AddNumbers checks the project (one GetItem: projects are never deleted),
// then writes each number with one UpdateItem that sets its hold and keeps
// any reservation.
func (d dniStore) AddNumbers(ctx context.Context, accountID, projectID string, numbers []string, hold time.Duration) error {
	if err := voiceops.ValidateDNINumbers(numbers, hold); err != nil {
		return err
	}
	s := d.s
	if _, found, err := s.get(ctx, "AddNumbers", projectKey(accountID, projectID)); err != nil || !found {
		return notFound(err)
	}
	for _, n := range numbers {
		_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName:        &s.table,
			Key:              dniKey(accountID, projectID, n),
			UpdateExpression: aws.String("SET #acct = :acct, #proj = :proj, #num = :num, #hold = :hold, #upd = :upd"),
			ExpressionAttributeNames: map[string]string{"#acct": attrAccountID, "#proj": attrDNIProjectID, "#num": attrDNINumber,
				"#hold": attrDNIHold, "#upd": attrUpdatedAt},
			ExpressionAttributeValues: item{":acct": avS(accountID), ":proj": avS(projectID), ":num": avS(n),
				":hold": avN(voiceops.DNIHold(hold).Milliseconds()), ":upd": avT(s.now())},
		})
		if err != nil {
			return wrap("AddNumbers", err)
		}
	}
	return nil
}

type dniCandidate struct {
	number string
	hold   time.Duration
}

// Reserve reads the pool (one Query) and takes the first free number with
// a conditional UpdateItem, trying the next free one when another
// reservation took it first. The scan starts at a random free number, so
// concurrent reservations seldom race for the same one.
func (d dniStore) Reserve(ctx context.Context, accountID, projectID string, attributes map[string]any, now time.Time) (string, time.Time, error) {
	s := d.s
	if attributes == nil {
		attributes = map[string]any{}
	}
	js, err := json.Marshal(attributes)
	if err != nil {
		return "", time.Time{}, wrap("Reserve", err)
	}
	if len(js) > maxConfigItemBytes {
		return "", time.Time{}, wrap("Reserve", fmt.Errorf("the attributes are %d bytes of JSON, over %d", len(js), maxConfigItemBytes))
	}
	items, err := s.queryPrefix(ctx, "Reserve", dniPK(accountID, projectID), skDNINumber)
	if err != nil {
		return "", time.Time{}, err
	}
	nowMs := now.UnixMilli()
	var free []dniCandidate
	for _, it := range items {
		r := reader{it: it}
		num := r.str(attrDNINumber)
		hold := r.num(attrDNIHold)
		until := r.optNum(attrDNIUntil)
		if r.err != nil {
			return "", time.Time{}, wrap("Reserve", r.err)
		}
		if until == nil || *until <= nowMs {
			free = append(free, dniCandidate{number: num, hold: time.Duration(hold) * time.Millisecond})
		}
	}
	if len(free) == 0 {
		return "", time.Time{}, voiceops.ErrNoAvailableNumber
	}
	start := rand.IntN(len(free))
	for i := range free {
		c := free[(start+i)%len(free)]
		expires := now.Add(voiceops.DNIHold(c.hold)).UTC().Truncate(time.Millisecond)
		_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName:                 &s.table,
			Key:                       dniKey(accountID, projectID, c.number),
			UpdateExpression:          aws.String("SET #until = :until, #attrs = :attrs, #at = :at"),
			ConditionExpression:       aws.String("attribute_exists(#pk) AND (attribute_not_exists(#until) OR #until <= :now)"),
			ExpressionAttributeNames:  map[string]string{"#pk": attrPK, "#until": attrDNIUntil, "#attrs": attrDNIAttrs, "#at": attrDNIAt},
			ExpressionAttributeValues: item{":until": avN(expires.UnixMilli()), ":attrs": avS(string(js)), ":at": avT(now), ":now": avN(nowMs)},
		})
		if _, failed := conditionFailed(err); failed {
			continue // taken meanwhile (or removed): try the next one
		}
		if err != nil {
			return "", time.Time{}, wrap("Reserve", err)
		}
		return c.number, expires, nil
	}
	return "", time.Time{}, voiceops.ErrNoAvailableNumber
}

// Consume ends a live reservation with one conditional UpdateItem that
// returns the old attributes.
func (d dniStore) Consume(ctx context.Context, accountID, projectID, number string, now time.Time) (map[string]any, bool, error) {
	s := d.s
	out, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 &s.table,
		Key:                       dniKey(accountID, projectID, number),
		UpdateExpression:          aws.String("REMOVE #until, #attrs, #at"),
		ConditionExpression:       aws.String("attribute_exists(#pk) AND #until > :now"),
		ExpressionAttributeNames:  map[string]string{"#pk": attrPK, "#until": attrDNIUntil, "#attrs": attrDNIAttrs, "#at": attrDNIAt},
		ExpressionAttributeValues: item{":now": avN(now.UnixMilli())},
		ReturnValues:              types.ReturnValueAllOld,
	})
	if _, failed := conditionFailed(err); failed {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, wrap("Consume", err)
	}
	attrs := map[string]any{}
	if v, ok := out.Attributes[attrDNIAttrs].(*types.AttributeValueMemberS); ok {
		if err := json.Unmarshal([]byte(v.Value), &attrs); err != nil {
			return nil, false, wrap("Consume", fmt.Errorf("attribute %s of %s: %w", attrDNIAttrs, number, err))
		}
		if attrs == nil {
			attrs = map[string]any{}
		}
	}
	return attrs, true, nil
}
