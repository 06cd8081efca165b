package dynamo_test

// The per-account limits (10 alert rules, 10 webhook endpoints) hold under
// concurrency because each limited create is one DynamoDB transaction whose
// counter update carries the limit in its condition: DynamoDB applies the
// condition and the write atomically and isolates transactions from each
// other, so 50 concurrent creates at 9 rules let exactly one through.
// moto does not isolate concurrent transactions (see awstest.SerialDynamoDB), so it
// cannot prove that; the memory store's race test proves the domain's
// side. These tests pin the other half: the exact transaction each
// limited create, and each delete that frees a place, sends. They need no
// emulator: a recording fake of dynamo.DB answers.

import (
	"context"
	"errors"
	"maps"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/voiceops/opsapi/shared/store/dynamo"
	"github.com/voiceops/opsapi/shared/voiceops"
)

const (
	txnConfigTable = "test-config"
	txnAccount     = "acct_limits"
)

// newLimitStores is the one place that builds the stores under test from a
// DB, so a change of dynamo's constructors (per-table constructors such as
// dynamo.NewConfig(db, table)) changes this function only.
func newLimitStores(db dynamo.DB) (voiceops.RuleStore, voiceops.EndpointStore) {
	s := dynamo.NewConfig(db, txnConfigTable, "test-deliveries")
	return s, s
}

// txnRecordingDB is a hand-written fake of dynamo.DB: it records every
// TransactWriteItems input and answers it with transactErr (nil: the
// transaction is written); GetItem answers from items, by pk and sk. Any
// other call is a test failure: a limited create must be one transaction.
type txnRecordingDB struct {
	t           *testing.T
	mu          sync.Mutex
	transacts   []*dynamodb.TransactWriteItemsInput
	transactErr error
	items       map[[2]string]map[string]types.AttributeValue
}

var _ dynamo.DB = (*txnRecordingDB)(nil)

func (f *txnRecordingDB) TransactWriteItems(_ context.Context, in *dynamodb.TransactWriteItemsInput, _ ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.transacts = append(f.transacts, in)
	if f.transactErr != nil {
		return nil, f.transactErr
	}
	return &dynamodb.TransactWriteItemsOutput{}, nil
}

func (f *txnRecordingDB) GetItem(_ context.Context, in *dynamodb.GetItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	k := [2]string{txnStr(in.Key["pk"]), txnStr(in.Key["sk"])}
	return &dynamodb.GetItemOutput{Item: f.items[k]}, nil
}

func (f *txnRecordingDB) PutItem(context.Context, *dynamodb.PutItemInput, ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	f.t.Error("unexpected PutItem")
	return nil, errors.New("unexpected")
}

func (f *txnRecordingDB) UpdateItem(context.Context, *dynamodb.UpdateItemInput, ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	f.t.Error("unexpected UpdateItem")
	return nil, errors.New("unexpected")
}

func (f *txnRecordingDB) DeleteItem(context.Context, *dynamodb.DeleteItemInput, ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	f.t.Error("unexpected DeleteItem")
	return nil, errors.New("unexpected")
}

func (f *txnRecordingDB) BatchGetItem(context.Context, *dynamodb.BatchGetItemInput, ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error) {
	f.t.Error("unexpected BatchGetItem")
	return nil, errors.New("unexpected")
}

func (f *txnRecordingDB) Query(context.Context, *dynamodb.QueryInput, ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	f.t.Error("unexpected Query")
	return nil, errors.New("unexpected")
}

// only returns the one transaction sent since the last call.
func (f *txnRecordingDB) only(t *testing.T) []types.TransactWriteItem {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.transacts) != 1 {
		t.Fatalf("%d transactions sent, want 1", len(f.transacts))
	}
	in := f.transacts[0]
	f.transacts = nil
	return in.TransactItems
}

func txnStr(v types.AttributeValue) string {
	s, _ := v.(*types.AttributeValueMemberS)
	if s == nil {
		return ""
	}
	return s.Value
}

func txnS(s string) types.AttributeValue { return &types.AttributeValueMemberS{Value: s} }
func txnN(n string) types.AttributeValue { return &types.AttributeValueMemberN{Value: n} }

func txnKey(pk, sk string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{"pk": txnS(pk), "sk": txnS(sk)}
}

// txnTakePlace is the counter update every limited create starts with: add
// one to the account's counter only if the account exists and the counter
// is below the limit. The strict < makes the limit-th create the last.
func txnTakePlace(counter, max string) types.TransactWriteItem {
	return types.TransactWriteItem{Update: &types.Update{
		TableName:                           aws.String(txnConfigTable),
		Key:                                 txnKey("ACCT#"+txnAccount, "A"),
		UpdateExpression:                    aws.String("ADD #count :one"),
		ConditionExpression:                 aws.String("attribute_exists(#pk) AND (attribute_not_exists(#count) OR #count < :max)"),
		ExpressionAttributeNames:            map[string]string{"#pk": "pk", "#count": counter},
		ExpressionAttributeValues:           map[string]types.AttributeValue{":one": txnN("1"), ":max": txnN(max)},
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}}
}

// txnFreePlace is the counter update of a delete, in the delete's transaction.
func txnFreePlace(counter string) types.TransactWriteItem {
	return types.TransactWriteItem{Update: &types.Update{
		TableName:                 aws.String(txnConfigTable),
		Key:                       txnKey("ACCT#"+txnAccount, "A"),
		UpdateExpression:          aws.String("ADD #count :minus"),
		ConditionExpression:       aws.String("attribute_exists(#pk)"),
		ExpressionAttributeNames:  map[string]string{"#pk": "pk", "#count": counter},
		ExpressionAttributeValues: map[string]types.AttributeValue{":minus": txnN("-1")},
	}}
}

// txnPutNew checks the Put of a created record: new only, under the key.
func txnPutNew(t *testing.T, got types.TransactWriteItem, pk, sk, id string) {
	t.Helper()
	p := got.Put
	if p == nil || got.Update != nil || got.Delete != nil || got.ConditionCheck != nil {
		t.Fatalf("want a Put, got %+v", got)
	}
	if aws.ToString(p.TableName) != txnConfigTable || aws.ToString(p.ConditionExpression) != "attribute_not_exists(#pk)" ||
		!reflect.DeepEqual(p.ExpressionAttributeNames, map[string]string{"#pk": "pk"}) || p.ExpressionAttributeValues != nil {
		t.Errorf("Put: table %q, condition %q, names %v, values %v; want %s, attribute_not_exists(#pk)",
			aws.ToString(p.TableName), aws.ToString(p.ConditionExpression), p.ExpressionAttributeNames, p.ExpressionAttributeValues, txnConfigTable)
	}
	if txnStr(p.Item["pk"]) != pk || txnStr(p.Item["sk"]) != sk || txnStr(p.Item["id"]) != id || txnStr(p.Item["account_id"]) != txnAccount {
		t.Errorf("Put item pk=%q sk=%q id=%q account_id=%q, want %s %s %s %s",
			txnStr(p.Item["pk"]), txnStr(p.Item["sk"]), txnStr(p.Item["id"]), txnStr(p.Item["account_id"]), pk, sk, id, txnAccount)
	}
}

func txnWant(t *testing.T, what string, got, want types.TransactWriteItem) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s:\n got %s\nwant %s", what, txnDescribe(got), txnDescribe(want))
	}
}

func txnDescribe(w types.TransactWriteItem) string {
	switch {
	case w.Update != nil:
		u := w.Update
		return "Update " + aws.ToString(u.TableName) + " " + txnStr(u.Key["pk"]) + "/" + txnStr(u.Key["sk"]) + " " + aws.ToString(u.UpdateExpression) +
			" IF " + aws.ToString(u.ConditionExpression) + " names=" + txnNames(u.ExpressionAttributeNames) + " values=" + txnValues(u.ExpressionAttributeValues) +
			" return=" + string(u.ReturnValuesOnConditionCheckFailure)
	case w.ConditionCheck != nil:
		c := w.ConditionCheck
		return "ConditionCheck " + aws.ToString(c.TableName) + " " + txnStr(c.Key["pk"]) + "/" + txnStr(c.Key["sk"]) + " IF " + aws.ToString(c.ConditionExpression) + " names=" + txnNames(c.ExpressionAttributeNames)
	case w.Delete != nil:
		d := w.Delete
		return "Delete " + aws.ToString(d.TableName) + " " + txnStr(d.Key["pk"]) + "/" + txnStr(d.Key["sk"]) + " IF " + aws.ToString(d.ConditionExpression) + " names=" + txnNames(d.ExpressionAttributeNames) + " values=" + txnValues(d.ExpressionAttributeValues)
	case w.Put != nil:
		return "Put " + aws.ToString(w.Put.TableName) + " " + txnStr(w.Put.Item["pk"]) + "/" + txnStr(w.Put.Item["sk"])
	}
	return "empty"
}

func txnNames(m map[string]string) string {
	s := ""
	for _, k := range slices.Sorted(maps.Keys(m)) {
		s += k + ":" + m[k] + " "
	}
	return "{" + s + "}"
}

func txnValues(m map[string]types.AttributeValue) string {
	s := ""
	for _, k := range slices.Sorted(maps.Keys(m)) {
		switch v := m[k].(type) {
		case *types.AttributeValueMemberN:
			s += k + ":N" + v.Value + " "
		case *types.AttributeValueMemberS:
			s += k + ":S" + v.Value + " "
		default:
			s += k + ":? "
		}
	}
	return "{" + s + "}"
}

// txnCanceled is DynamoDB's answer to a transaction some of whose conditions
// failed: reasons[i] is "" (None), or "failed" with the item as it was (nil:
// missing), as ReturnValuesOnConditionCheckFailure ALL_OLD returns it.
func txnCanceled(n int, failed int, old map[string]types.AttributeValue) error {
	reasons := make([]types.CancellationReason, n)
	for i := range reasons {
		reasons[i] = types.CancellationReason{Code: aws.String("None")}
	}
	reasons[failed] = types.CancellationReason{Code: aws.String("ConditionalCheckFailed"), Item: old}
	return &types.TransactionCanceledException{Message: aws.String("Transaction cancelled"), CancellationReasons: reasons}
}

func txnAccountAt(counter string, n string) map[string]types.AttributeValue {
	it := txnKey("ACCT#"+txnAccount, "A")
	it["id"] = txnS(txnAccount)
	it[counter] = txnN(n)
	return it
}

func txnRule(project *string) voiceops.AlertRule {
	return voiceops.NewRule(voiceops.NewID(voiceops.PrefixRule), txnAccount, voiceops.RuleInput{
		Name: "Slow turns", ProjectID: project, Metric: voiceops.MetricTurnLatencyP95, Operator: voiceops.OpGreater,
		Threshold: 1500, Window: voiceops.Window5m,
	}, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
}

// TestCreateRuleIsOneConditionalTransaction: an alert rule create is one
// transaction of the counter update under the 10-per-account limit, the
// Put of the new rule and, for a project rule, a check of the project.
// DynamoDB refusing the counter's condition on an existing account is the
// limit (409), on a missing account ErrNotFound.
func TestCreateRuleIsOneConditionalTransaction(t *testing.T) {
	if voiceops.MaxRulesPerAccount != 10 {
		t.Fatalf("MaxRulesPerAccount = %d; the contract says 10", voiceops.MaxRulesPerAccount)
	}
	project := "proj_a"
	for name, r := range map[string]voiceops.AlertRule{"account-wide": txnRule(nil), "project": txnRule(&project)} {
		t.Run(name, func(t *testing.T) {
			db := &txnRecordingDB{t: t}
			rules, _ := newLimitStores(db)
			if err := rules.CreateRule(t.Context(), r); err != nil {
				t.Fatal(err)
			}
			items := db.only(t)
			want := 2
			if r.ProjectID != nil {
				want = 3
			}
			if len(items) != want {
				t.Fatalf("transaction of %d items, want %d: %v", len(items), want, items)
			}
			txnWant(t, "item 0, the place under the limit", items[0], txnTakePlace("rule_count", "10"))
			txnPutNew(t, items[1], "ACCT#"+txnAccount, "RULE#"+r.ID, r.ID)
			if r.ProjectID != nil {
				txnWant(t, "item 2, the project", items[2], types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{
					TableName: aws.String(txnConfigTable), Key: txnKey("ACCT#"+txnAccount, "PROJ#"+project),
					ConditionExpression: aws.String("attribute_exists(#pk)"), ExpressionAttributeNames: map[string]string{"#pk": "pk"},
				}})
			}

			// DynamoDB's refusals, mapped.
			for _, c := range []struct {
				err  error
				want error
			}{
				{txnCanceled(want, 0, txnAccountAt("rule_count", "10")), voiceops.ErrRuleLimit},
				{txnCanceled(want, 0, nil), voiceops.ErrNotFound},
				{txnCanceled(want, 1, nil), voiceops.ErrAlreadyExists},
			} {
				db.transactErr = c.err
				if err := rules.CreateRule(t.Context(), r); !errors.Is(err, c.want) {
					t.Errorf("CreateRule when DynamoDB answers %v: %v, want %v", c.err, err, c.want)
				}
				db.only(t)
			}
			if r.ProjectID != nil {
				db.transactErr = txnCanceled(want, 2, nil)
				if err := rules.CreateRule(t.Context(), r); !errors.Is(err, voiceops.ErrProjectNotFound) {
					t.Errorf("CreateRule with the project missing: %v, want ErrProjectNotFound", err)
				}
			}
		})
	}
}

// TestCreateEndpointIsOneConditionalTransaction: a webhook endpoint create
// is one transaction of the counter update under the 10-per-account limit
// and the Put of the new endpoint.
func TestCreateEndpointIsOneConditionalTransaction(t *testing.T) {
	if voiceops.MaxEndpointsPerAccount != 10 {
		t.Fatalf("MaxEndpointsPerAccount = %d; the contract says 10", voiceops.MaxEndpointsPerAccount)
	}
	db := &txnRecordingDB{t: t}
	_, endpoints := newLimitStores(db)
	e := voiceops.NewEndpoint(voiceops.NewID(voiceops.PrefixEndpoint), txnAccount, "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", voiceops.EndpointInput{
		Name: "pager", URL: "https://hooks.example.com/alerts", EventTypes: voiceops.EventTypes,
	}, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	if err := endpoints.CreateEndpoint(t.Context(), e); err != nil {
		t.Fatal(err)
	}
	items := db.only(t)
	if len(items) != 2 {
		t.Fatalf("transaction of %d items, want 2", len(items))
	}
	txnWant(t, "item 0, the place under the limit", items[0], txnTakePlace("endpoint_count", "10"))
	txnPutNew(t, items[1], "ACCT#"+txnAccount, "WHE#"+e.ID, e.ID)

	for _, c := range []struct {
		err  error
		want error
	}{
		{txnCanceled(2, 0, txnAccountAt("endpoint_count", "10")), voiceops.ErrEndpointLimit},
		{txnCanceled(2, 0, nil), voiceops.ErrNotFound},
		{txnCanceled(2, 1, nil), voiceops.ErrAlreadyExists},
	} {
		db.transactErr = c.err
		if err := endpoints.CreateEndpoint(t.Context(), e); !errors.Is(err, c.want) {
			t.Errorf("CreateEndpoint when DynamoDB answers %v: %v, want %v", c.err, err, c.want)
		}
		db.only(t)
	}
}

// TestDeletesFreeTheirPlaceInTheSameTransaction: deleting a rule or an
// endpoint gives its place back in the transaction that deletes it, on the
// condition of the version read, so the counter never drifts from the
// records it counts.
func TestDeletesFreeTheirPlaceInTheSameTransaction(t *testing.T) {
	deleteVersion := func(sk string, version string) types.TransactWriteItem {
		return types.TransactWriteItem{Delete: &types.Delete{
			TableName: aws.String(txnConfigTable), Key: txnKey("ACCT#"+txnAccount, sk),
			ConditionExpression:       aws.String("#version = :expect"),
			ExpressionAttributeNames:  map[string]string{"#version": "version"},
			ExpressionAttributeValues: map[string]types.AttributeValue{":expect": txnN(version)},
		}}
	}
	t.Run("rule", func(t *testing.T) {
		db := &txnRecordingDB{t: t}
		rules, _ := newLimitStores(db)
		r := txnRule(nil)
		if err := rules.CreateRule(t.Context(), r); err != nil {
			t.Fatal(err)
		}
		stored := db.only(t)[1].Put.Item
		db.items = map[[2]string]map[string]types.AttributeValue{{txnStr(stored["pk"]), txnStr(stored["sk"])}: stored}
		if _, err := rules.DeleteRule(t.Context(), txnAccount, r.ID, nil); err != nil {
			t.Fatal(err)
		}
		items := db.only(t)
		if len(items) != 2 {
			t.Fatalf("transaction of %d items, want 2", len(items))
		}
		txnWant(t, "item 0, the rule", items[0], deleteVersion("RULE#"+r.ID, "1"))
		txnWant(t, "item 1, the place", items[1], txnFreePlace("rule_count"))
	})
	t.Run("endpoint", func(t *testing.T) {
		db := &txnRecordingDB{t: t}
		_, endpoints := newLimitStores(db)
		e := voiceops.NewEndpoint(voiceops.NewID(voiceops.PrefixEndpoint), txnAccount, "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", voiceops.EndpointInput{
			Name: "pager", URL: "https://hooks.example.com/alerts", EventTypes: voiceops.EventTypes,
		}, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
		if err := endpoints.CreateEndpoint(t.Context(), e); err != nil {
			t.Fatal(err)
		}
		stored := db.only(t)[1].Put.Item
		db.items = map[[2]string]map[string]types.AttributeValue{{txnStr(stored["pk"]), txnStr(stored["sk"])}: stored}
		if err := endpoints.DeleteEndpoint(t.Context(), txnAccount, e.ID); err != nil {
			t.Fatal(err)
		}
		items := db.only(t)
		if len(items) != 2 {
			t.Fatalf("transaction of %d items, want 2", len(items))
		}
		txnWant(t, "item 0, the endpoint", items[0], deleteVersion("WHE#"+e.ID, "1"))
		txnWant(t, "item 1, the place", items[1], txnFreePlace("endpoint_count"))
	})
}

// TestWakeIsInTheRulesTransaction: a rule written marked Wake sends its
// wake-up, an unconditional Put of a touch in the scope's partition of
// the metrics table, in the rule's own transaction: the create's, and an
// update's (which is otherwise a PutItem).
func TestWakeIsInTheRulesTransaction(t *testing.T) {
	f := &txnRecordingDB{t: t}
	s := dynamo.NewConfig(f, txnConfigTable, "test-deliveries").WakingIn("test-metrics")
	proj := "proj_w"
	r := voiceops.NewRule(voiceops.NewID(voiceops.PrefixRule), txnAccount, voiceops.RuleInput{Name: "w", ProjectID: &proj,
		Metric: voiceops.MetricAPIErrors, Operator: voiceops.OpGreater, Threshold: 1, Window: voiceops.Window5m}, time.Now())
	r.Wake = true
	wantTouch := func(what string, items []types.TransactWriteItem, rest int) {
		t.Helper()
		if len(items) != rest+1 {
			t.Fatalf("%s: %d items, want %d and the touch", what, len(items), rest)
		}
		touch := items[len(items)-1].Put
		if touch == nil || aws.ToString(touch.TableName) != "test-metrics" || touch.ConditionExpression != nil ||
			txnStr(touch.Item["pk"]) != dynamo.MetricPartition(txnAccount, proj) || len(txnStr(touch.Item["sk"])) < 3 || txnStr(touch.Item["sk"])[:2] != "T#" {
			t.Errorf("%s: last item %+v, want an unconditional Put of a touch of %s in test-metrics", what, items[len(items)-1], dynamo.MetricPartition(txnAccount, proj))
		}
		for _, it := range items[:rest] {
			if it.Put != nil && aws.ToString(it.Put.TableName) == "test-metrics" {
				t.Errorf("%s: two touches", what)
			}
		}
	}
	if err := s.CreateRule(t.Context(), r); err != nil {
		t.Fatal(err)
	}
	wantTouch("CreateRule", f.only(t), 3) // the place, the rule, its project's check
	next := r
	next.Threshold, next.Version = 2, r.Version+1
	if err := s.UpdateRule(t.Context(), next, r.Version, false); err != nil {
		t.Fatal(err)
	}
	wantTouch("UpdateRule", f.only(t), 1)
}
