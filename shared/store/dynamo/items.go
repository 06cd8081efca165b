package dynamo

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/voiceops/opsapi/shared/platform/tables"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// item is one stored item.
type item = map[string]types.AttributeValue

// Key attributes, from the table definitions.
var (
	attrPK     = tables.Config.PartitionKey
	attrSK     = tables.Config.SortKey
	attrTTL    = tables.Config.TTLAttribute
	index1     = tables.Config.GSIs[0]
	attrGSI1PK = index1.PartitionKey
	attrGSI1SK = index1.SortKey
)

// Attributes every record kind shares.
const (
	attrID        = "id"
	attrAccountID = "account_id"
	attrName      = "name"
	attrCreatedAt = "created_at"
	attrUpdatedAt = "updated_at"
	attrVersion   = "version"
)

// Key prefixes of the configuration table.
const (
	pkAccount     = "ACCT#"
	pkKeyDigest   = "KEY#"
	skAccount     = "A"
	skProject     = "PROJ#"
	skKey         = "KEY#"
	skKeyDigest   = "K"
	skRule        = "RULE#"
	skEndpoint    = "WHE#"
	gsiAccounts   = "ACCOUNTS"
	gsiRulePrefix = "RULES#"
)

// RuleShardKey returns the evaluator-index partition of shard (0 to
// voiceops.RuleShards-1, voiceops.RuleShardOf an account): "RULES#00" to
// "RULES#15".
func RuleShardKey(shard int) string { return fmt.Sprintf("%s%02d", gsiRulePrefix, shard) }

func key(pk, sk string) item { return item{attrPK: avS(pk), attrSK: avS(sk)} }

// strOf is the string attribute name of it, "" when it has none.
func strOf(it item, name string) string {
	v, _ := it[name].(*types.AttributeValueMemberS)
	if v == nil {
		return ""
	}
	return v.Value
}

func accountKey(id string) item               { return key(pkAccount+id, skAccount) }
func projectKey(accountID, id string) item    { return key(pkAccount+accountID, skProject+id) }
func accountKeyKey(accountID, id string) item { return key(pkAccount+accountID, skKey+id) }
func digestKey(digest string) item            { return key(pkKeyDigest+digest, skKeyDigest) }
func ruleKey(accountID, id string) item       { return key(pkAccount+accountID, skRule+id) }
func endpointKey(accountID, id string) item   { return key(pkAccount+accountID, skEndpoint+id) }

// --- encoding -------------------------------------------------------------------

func avS(s string) types.AttributeValue { return &types.AttributeValueMemberS{Value: s} }
func avN(n int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(n, 10)}
}
func avB(b bool) types.AttributeValue { return &types.AttributeValueMemberBOOL{Value: b} }

// avT stores a time as an RFC 3339 UTC string with all its digits.
func avT(t time.Time) types.AttributeValue { return avS(t.UTC().Format(time.RFC3339Nano)) }

func avStrings[T ~string](vs []T) types.AttributeValue {
	l := make([]types.AttributeValue, len(vs))
	for i, v := range vs {
		l[i] = avS(string(v))
	}
	return &types.AttributeValueMemberL{Value: l}
}

func avStringMap(m map[string]string) types.AttributeValue {
	out := make(item, len(m))
	for k, v := range m {
		out[k] = avS(v)
	}
	return &types.AttributeValueMemberM{Value: out}
}

// setOpt stores *p under name, or nothing when p is nil (read back as nil).
func setOpt[T any](it item, name string, p *T, enc func(T) types.AttributeValue) {
	if p != nil {
		it[name] = enc(*p)
	}
}

// setNonEmpty stores s under name unless it is empty (read back as "").
func setNonEmpty(it item, name, s string) {
	if s != "" {
		it[name] = avS(s)
	}
}

// --- decoding -------------------------------------------------------------------

// reader decodes the attributes of one item, keeping the first error.
// Absent optional attributes read as nil or ""; absent required ones (num,
// time, boolean) are errors. Only the attributes of a record kind's first
// shape may be read as required: items written before a later attribute
// existed lack it, so it is read as optional and its absence decodes to the
// field's documented default (TestOldItems fails otherwise).
type reader struct {
	it  item
	err error
}

func (r *reader) fail(name, format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("attribute %s of item %v/%v: %s", name, r.it[attrPK], r.it[attrSK], fmt.Sprintf(format, args...))
	}
}

func (r *reader) str(name string) string {
	v, ok := r.it[name]
	if !ok {
		return ""
	}
	s, ok := v.(*types.AttributeValueMemberS)
	if !ok {
		if _, null := v.(*types.AttributeValueMemberNULL); !null {
			r.fail(name, "want a string, got %T", v)
		}
		return ""
	}
	return s.Value
}

func (r *reader) optStr(name string) *string {
	if !r.present(name) {
		return nil
	}
	s := r.str(name)
	return &s
}

// present reports whether name holds a value other than NULL.
func (r *reader) present(name string) bool {
	v, ok := r.it[name]
	if !ok {
		return false
	}
	_, null := v.(*types.AttributeValueMemberNULL)
	return !null
}

func (r *reader) num(name string) int64 {
	if !r.present(name) {
		r.fail(name, "missing")
		return 0
	}
	n, ok := r.it[name].(*types.AttributeValueMemberN)
	if !ok {
		r.fail(name, "want a number, got %T", r.it[name])
		return 0
	}
	v, err := strconv.ParseInt(n.Value, 10, 64)
	if err != nil {
		r.fail(name, "%v", err)
	}
	return v
}

func (r *reader) optNum(name string) *int64 {
	if !r.present(name) {
		return nil
	}
	v := r.num(name)
	return &v
}

func (r *reader) boolean(name string) bool {
	b, ok := r.it[name].(*types.AttributeValueMemberBOOL)
	if !ok {
		r.fail(name, "want a boolean, got %T", r.it[name])
		return false
	}
	return b.Value
}

func (r *reader) time(name string) time.Time {
	if !r.present(name) {
		r.fail(name, "missing")
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339Nano, r.str(name))
	if err != nil {
		r.fail(name, "%v", err)
	}
	return t
}

func (r *reader) optTime(name string) *time.Time {
	if !r.present(name) {
		return nil
	}
	t := r.time(name)
	return &t
}

func readStrings[T ~string](r *reader, name string) []T {
	if !r.present(name) {
		return nil
	}
	l, ok := r.it[name].(*types.AttributeValueMemberL)
	if !ok {
		r.fail(name, "want a list, got %T", r.it[name])
		return nil
	}
	out := make([]T, 0, len(l.Value))
	for _, v := range l.Value {
		s, ok := v.(*types.AttributeValueMemberS)
		if !ok {
			r.fail(name, "want a list of strings, got a %T in it", v)
			return nil
		}
		out = append(out, T(s.Value))
	}
	return out
}

func (r *reader) stringMap(name string) map[string]string {
	out := map[string]string{}
	if !r.present(name) {
		return out
	}
	m, ok := r.it[name].(*types.AttributeValueMemberM)
	if !ok {
		r.fail(name, "want a map, got %T", r.it[name])
		return out
	}
	for k, v := range m.Value {
		s, ok := v.(*types.AttributeValueMemberS)
		if !ok {
			r.fail(name, "want a map of strings, got a %T at %q", v, k)
			return out
		}
		out[k] = s.Value
	}
	return out
}

// Expired reports whether the item's TTL attribute (tables.TTL, unix
// seconds) has passed. DynamoDB deletes such items up to days late, so
// every read of every table ignores them (shared/store/dynamo/metricstore too).
func Expired(it map[string]types.AttributeValue, now time.Time) bool {
	n, ok := it[attrTTL].(*types.AttributeValueMemberN)
	if !ok {
		return false
	}
	sec, err := strconv.ParseInt(n.Value, 10, 64)
	if err != nil {
		f, ferr := strconv.ParseFloat(n.Value, 64)
		if ferr != nil {
			return false
		}
		sec = int64(f)
	}
	return sec <= now.Unix()
}

// --- reads ----------------------------------------------------------------------

// get reads one item; found is false when it is missing or expired.
func (s *store) get(ctx context.Context, op string, k item) (it item, found bool, err error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.table, Key: k, ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil, false, wrap(op, err)
	}
	if len(out.Item) == 0 || Expired(out.Item, s.now()) {
		return nil, false, nil
	}
	return out.Item, true, nil
}

// queryPrefix returns the live items of partition pk whose sort key starts
// with prefix, in sort-key order, following every page.
func (s *store) queryPrefix(ctx context.Context, op, pk, prefix string) ([]item, error) {
	return s.query(ctx, op, &dynamodb.QueryInput{
		TableName:                 &s.table,
		KeyConditionExpression:    aws.String("#pk = :pk AND begins_with(#sk, :prefix)"),
		ExpressionAttributeNames:  map[string]string{"#pk": attrPK, "#sk": attrSK},
		ExpressionAttributeValues: item{":pk": avS(pk), ":prefix": avS(prefix)},
		ConsistentRead:            aws.Bool(true),
	})
}

func (s *store) query(ctx context.Context, op string, in *dynamodb.QueryInput) ([]item, error) {
	var items []item
	now := s.now()
	for {
		out, err := s.db.Query(ctx, in)
		if err != nil {
			return nil, wrap(op, err)
		}
		for _, it := range out.Items {
			if !Expired(it, now) {
				items = append(items, it)
			}
		}
		if len(out.LastEvaluatedKey) == 0 {
			return items, nil
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
}

// --- writes ---------------------------------------------------------------------

// Condition expressions; every attribute name goes through
// ExpressionAttributeNames, so none can clash with a reserved word.
const (
	condNew     = "attribute_not_exists(#pk)"
	condExists  = "attribute_exists(#pk)"
	condVersion = "#version = :expect"
)

var namePK = map[string]string{"#pk": attrPK}

// txPutNew puts an item that must not exist yet.
func (s *store) txPutNew(it item) types.TransactWriteItem {
	return types.TransactWriteItem{Put: &types.Put{
		TableName: &s.table, Item: it, ConditionExpression: aws.String(condNew), ExpressionAttributeNames: namePK,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld, // see applied
	}}
}

// txExists checks that an item exists.
func (s *store) txExists(k item) types.TransactWriteItem {
	return types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{
		TableName: &s.table, Key: k, ConditionExpression: aws.String(condExists), ExpressionAttributeNames: namePK,
	}}
}

// txPutVersion replaces an item whose version is expect; on failure the
// outcome's old item tells a stale version (present) from a missing item.
func (s *store) txPutVersion(it item, expect int64) types.TransactWriteItem {
	return types.TransactWriteItem{Put: &types.Put{
		TableName: &s.table, Item: it, ConditionExpression: aws.String(condVersion),
		ExpressionAttributeNames:            map[string]string{"#version": attrVersion},
		ExpressionAttributeValues:           item{":expect": avN(expect)},
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}}
}

// txDeleteVersion deletes an item whose version is expect.
func (s *store) txDeleteVersion(k item, expect int64) types.TransactWriteItem {
	return types.TransactWriteItem{Delete: &types.Delete{
		TableName: &s.table, Key: k, ConditionExpression: aws.String(condVersion),
		ExpressionAttributeNames:  map[string]string{"#version": attrVersion},
		ExpressionAttributeValues: item{":expect": avN(expect)},
	}}
}

// txTakePlace adds one to a counter of the account item if it is below max;
// on failure the outcome's old item is the account (limit reached) or nil
// (no such account).
func (s *store) txTakePlace(accountID, counter string, max int) types.TransactWriteItem {
	return types.TransactWriteItem{Update: &types.Update{
		TableName: &s.table, Key: accountKey(accountID),
		UpdateExpression:                    aws.String("ADD #count :one"),
		ConditionExpression:                 aws.String("attribute_exists(#pk) AND (attribute_not_exists(#count) OR #count < :max)"),
		ExpressionAttributeNames:            map[string]string{"#pk": attrPK, "#count": counter},
		ExpressionAttributeValues:           item{":one": avN(1), ":max": avN(int64(max))},
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}}
}

// txFreePlace subtracts one from a counter of the account item.
func (s *store) txFreePlace(accountID, counter string) types.TransactWriteItem {
	return types.TransactWriteItem{Update: &types.Update{
		TableName: &s.table, Key: accountKey(accountID),
		UpdateExpression:          aws.String("ADD #count :minus"),
		ConditionExpression:       aws.String(condExists),
		ExpressionAttributeNames:  map[string]string{"#pk": attrPK, "#count": counter},
		ExpressionAttributeValues: item{":minus": avN(-1)},
	}}
}

// putVersion replaces an item whose version is expect, in one PutItem:
// ErrConflictingWrite when the stored version differs, ErrNotFound when
// there is no such item.
func (s *store) putVersion(ctx context.Context, op string, it item, expect int64) error {
	_, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: &s.table, Item: it, ConditionExpression: aws.String(condVersion),
		ExpressionAttributeNames:            map[string]string{"#version": attrVersion},
		ExpressionAttributeValues:           item{":expect": avN(expect)},
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	if old, ok := conditionFailed(err); ok {
		switch {
		case sameItem(old, it): // an earlier attempt of this call was applied (see applied)
			return nil
		case len(old) == 0 || Expired(old, s.now()):
			return voiceops.ErrNotFound
		}
		return voiceops.ErrConflictingWrite
	}
	if err != nil {
		return wrap(op, err)
	}
	return nil
}
