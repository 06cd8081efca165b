package dynamo

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/voiceops/opsapi/shared/voiceops"
)

// Attributes of a rule.
const (
	attrMetric          = "metric"
	attrOperator        = "operator"
	attrThreshold       = "threshold"
	attrWindow          = "window"
	attrEnabled         = "enabled"
	attrState           = "state"
	attrSince           = "since"
	attrLastEvaluatedAt = "last_evaluated_at"
	attrCurrentValue    = "current_value"
	attrSequence        = "sequence"
	attrSilencedFrom    = "silenced_from"
)

// ruleAttrs are the attributes of a rule's item, but its keys and the
// evaluator index's.
var ruleAttrs = []attr[voiceops.AlertRule]{
	strField(attrID, func(r *voiceops.AlertRule) *string { return &r.ID }),
	strField(attrAccountID, func(r *voiceops.AlertRule) *string { return &r.AccountID }),
	strField(attrName, func(r *voiceops.AlertRule) *string { return &r.Name }),
	optStrField(attrProjectID, func(r *voiceops.AlertRule) **string { return &r.ProjectID }),
	strField(attrMetric, func(r *voiceops.AlertRule) *voiceops.Metric { return &r.Metric }),
	strField(attrOperator, func(r *voiceops.AlertRule) *voiceops.Operator { return &r.Operator }),
	numField(attrThreshold, func(r *voiceops.AlertRule) *int64 { return &r.Threshold }),
	strField(attrWindow, func(r *voiceops.AlertRule) *voiceops.Window { return &r.Window }),
	boolField(attrEnabled, func(r *voiceops.AlertRule) *bool { return &r.Enabled }),
	strField(attrState, func(r *voiceops.AlertRule) *voiceops.State { return &r.State }),
	timeField(attrCreatedAt, func(r *voiceops.AlertRule) *time.Time { return &r.CreatedAt }),
	timeField(attrUpdatedAt, func(r *voiceops.AlertRule) *time.Time { return &r.UpdatedAt }),
	optTimeField(attrSince, func(r *voiceops.AlertRule) **time.Time { return &r.Since }),
	optTimeField(attrLastEvaluatedAt, func(r *voiceops.AlertRule) **time.Time { return &r.LastEvaluatedAt }),
	optNumField(attrCurrentValue, func(r *voiceops.AlertRule) **int64 { return &r.CurrentValue }),
	numField(attrVersion, func(r *voiceops.AlertRule) *int64 { return &r.Version }),
	countField(attrSequence, func(r *voiceops.AlertRule) *int64 { return &r.Sequence }),                        // absent on rules that never fired
	nonEmptyStrField(attrSilencedFrom, func(r *voiceops.AlertRule) *voiceops.State { return &r.SilencedFrom }), // absent unless a silence held back an event
}

// encodeRule returns the item of a rule. Only an enabled rule carries the
// evaluator-index attributes, so the index holds exactly the rules to
// evaluate; a Put of the disabled rule removes them.
func encodeRule(r voiceops.AlertRule) item {
	it := ruleKey(r.AccountID, r.ID)
	encodeAttrs(it, &r, ruleAttrs)
	if r.Enabled {
		it[attrGSI1PK] = avS(RuleShardKey(voiceops.RuleShardOf(r.AccountID)))
		it[attrGSI1SK] = avS(r.AccountID + "#" + r.ID)
	}
	return it
}

// DecodeRule decodes a rule item, such as one of the evaluator index.
func DecodeRule(it map[string]types.AttributeValue) (voiceops.AlertRule, error) {
	r := reader{it: it}
	var rule voiceops.AlertRule
	decodeAttrs(&r, &rule, ruleAttrs)
	return rule, r.err
}

// CreateRule is one transaction: take a place under the account's rule
// limit, put the rule, check its project, and wake its scope (Wake).
func (s *Config) CreateRule(ctx context.Context, r voiceops.AlertRule) error {
	const place, put, project = 0, 1, 2
	writes := []types.TransactWriteItem{
		place: s.txTakePlace(r.AccountID, attrRuleCount, voiceops.MaxRulesPerAccount),
		put:   s.txPutNew(encodeRule(r)),
	}
	if r.ProjectID != nil {
		writes = append(writes, s.txExists(projectKey(r.AccountID, *r.ProjectID)))
	}
	writes = s.appendWake(writes, r)
	o, err := s.transact(ctx, "CreateRule", writes)
	switch {
	case err != nil:
		return err
	case o.missing(place):
		return voiceops.ErrNotFound
	case len(writes) > project && o.failed[project]:
		return voiceops.ErrProjectNotFound
	case o.exists(place):
		return voiceops.ErrRuleLimit
	case o.failed[put]:
		return voiceops.ErrAlreadyExists
	}
	return nil
}

// GetRule is one GetItem.
func (s *Config) GetRule(ctx context.Context, accountID, ruleID string) (voiceops.AlertRule, error) {
	return s.getRule(ctx, "GetRule", accountID, ruleID)
}

// getRule reads the rule's item alone.
func (s *Config) getRule(ctx context.Context, op, accountID, ruleID string) (voiceops.AlertRule, error) {
	it, found, err := s.get(ctx, op, ruleKey(accountID, ruleID))
	if err != nil || !found {
		return voiceops.AlertRule{}, notFound(err)
	}
	r, err := DecodeRule(it)
	if err != nil {
		return voiceops.AlertRule{}, wrap(op, err)
	}
	return r, nil
}

// ListRules is one Query (more only past a page of 1 MB).
func (s *Config) ListRules(ctx context.Context, accountID string) ([]voiceops.AlertRule, error) {
	items, err := s.queryPrefix(ctx, "ListRules", pkAccount+accountID, skRule)
	if err != nil {
		return nil, err
	}
	out := make([]voiceops.AlertRule, 0, len(items))
	for _, it := range items {
		r, err := DecodeRule(it)
		if err != nil {
			return nil, wrap("ListRules", err)
		}
		out = append(out, r)
	}
	voiceops.SortRules(out)
	return out, nil
}

// UpdateRule is one call: a conditional PutItem, or, when the project must
// be checked, a transaction of that Put and a check of the project.
//
// With events, the Put and one Put per event (in the deliveries table) are
// one transaction: the state change and its events are written together.
// So are the Put and the wake-up of the rule's scope (Wake, in the metrics
// table).
func (s *Config) UpdateRule(ctx context.Context, r voiceops.AlertRule, expectVersion int64, checkProject bool, events ...voiceops.AlertEvent) error {
	checkProject = checkProject && r.ProjectID != nil
	wake := r.Wake && s.wakes()
	if !checkProject && len(events) == 0 && r.Change == nil && !wake {
		return s.putVersion(ctx, "UpdateRule", encodeRule(r), expectVersion)
	}
	const put = 0
	writes := []types.TransactWriteItem{put: s.txPutVersion(encodeRule(r), expectVersion)}
	project := -1
	if checkProject {
		project = len(writes)
		writes = append(writes, s.txExists(projectKey(r.AccountID, *r.ProjectID)))
	}
	for _, e := range events {
		writes = append(writes, types.TransactWriteItem{Put: eventPut(s.deliveriesTable, e)})
	}
	if r.Change != nil {
		// The history entry (history.go) goes with the state it records.
		writes = append(writes, types.TransactWriteItem{Put: historyPut(s.deliveriesTable, r)})
	}
	writes = s.appendWake(writes, r)
	o, err := s.transact(ctx, "UpdateRule", writes)
	switch {
	case err != nil:
		return err
	case o.missing(put):
		return voiceops.ErrNotFound
	case o.exists(put):
		return voiceops.ErrConflictingWrite
	case project >= 0 && o.failed[project]:
		return voiceops.ErrProjectNotFound
	case !o.ok():
		return wrap("UpdateRule", fmt.Errorf("an event of rule %s already exists", r.ID))
	}
	return nil
}

// appendWake adds the wake-up of r's scope, at its update time, to the
// writes of r when r is marked Wake and the store writes wake-ups.
func (s *Config) appendWake(writes []types.TransactWriteItem, r voiceops.AlertRule) []types.TransactWriteItem {
	if !r.Wake || !s.wakes() {
		return writes
	}
	project := ""
	if r.ProjectID != nil {
		project = *r.ProjectID
	}
	return append(writes, s.txWake(r.AccountID, project, r.UpdatedAt))
}

// ListEnabledRules is one Query of the sparse evaluator index per page.
func (s *Config) ListEnabledRules(ctx context.Context, shard int) ([]voiceops.AlertRule, error) {
	items, err := s.query(ctx, "ListEnabledRules", &dynamodb.QueryInput{
		TableName: &s.table, IndexName: aws.String(index1.Name),
		KeyConditionExpression:    aws.String("#gpk = :gpk"),
		ExpressionAttributeNames:  map[string]string{"#gpk": attrGSI1PK},
		ExpressionAttributeValues: item{":gpk": avS(RuleShardKey(shard))},
	})
	if err != nil {
		return nil, err
	}
	out := make([]voiceops.AlertRule, 0, len(items))
	for _, it := range items {
		r, err := DecodeRule(it)
		if err != nil {
			return nil, wrap("ListEnabledRules", err)
		}
		out = append(out, r)
	}
	return out, nil
}

// deleteAttempts bounds DeleteRule and DeleteEndpoint when concurrent
// updates keep changing the version between the read and the delete.
const deleteAttempts = 3

// DeleteRule reads the rule, then deletes it and frees its place in one
// transaction conditional on the version read: two calls.
func (s *Config) DeleteRule(ctx context.Context, accountID, ruleID string, events func(voiceops.AlertRule) []voiceops.AlertEvent) (voiceops.AlertRule, error) {
	for range deleteAttempts {
		r, err := s.getRule(ctx, "DeleteRule", accountID, ruleID)
		if err != nil {
			return voiceops.AlertRule{}, err
		}
		const del, place = 0, 1
		writes := []types.TransactWriteItem{
			del:   s.txDeleteVersion(ruleKey(accountID, ruleID), r.Version),
			place: s.txFreePlace(accountID, attrRuleCount),
		}
		if events != nil {
			for _, e := range events(r) {
				writes = append(writes, types.TransactWriteItem{Put: eventPut(s.deliveriesTable, e)})
			}
		}
		o, err := s.transact(ctx, "DeleteRule", writes)
		switch {
		case err != nil:
			return voiceops.AlertRule{}, err
		case o.failed[place]:
			return voiceops.AlertRule{}, wrap("DeleteRule", fmt.Errorf("account %s of rule %s is missing", accountID, ruleID))
		case o.ok():
			return r, nil
		}
		// Changed or deleted since we read it: read it again.
	}
	return voiceops.AlertRule{}, voiceops.ErrConflictingWrite
}
