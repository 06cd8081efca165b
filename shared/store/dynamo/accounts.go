package dynamo

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/voiceops/opsapi/shared/voiceops"
)

// Counters of the account item: how many rules and endpoints it has.
const (
	attrRuleCount     = "rule_count"
	attrEndpointCount = "endpoint_count"
)

func encodeAccount(a voiceops.Account) item {
	it := accountKey(a.ID)
	it[attrID] = avS(a.ID)
	it[attrName] = avS(a.Name)
	it[attrCreatedAt] = avT(a.CreatedAt)
	// Every account is listed on the shared index, so ListAccounts is a query.
	it[attrGSI1PK] = avS(gsiAccounts)
	it[attrGSI1SK] = avS(a.ID)
	return it
}

func decodeAccount(it item) (voiceops.Account, error) {
	r := reader{it: it}
	a := voiceops.Account{ID: r.str(attrID), Name: r.str(attrName), CreatedAt: r.time(attrCreatedAt)}
	return a, r.err
}

func encodeProject(p voiceops.Project) item {
	it := projectKey(p.AccountID, p.ID)
	it[attrID] = avS(p.ID)
	it[attrAccountID] = avS(p.AccountID)
	it[attrName] = avS(p.Name)
	it[attrCreatedAt] = avT(p.CreatedAt)
	return it
}

func decodeProject(it item) (voiceops.Project, error) {
	r := reader{it: it}
	p := voiceops.Project{ID: r.str(attrID), AccountID: r.str(attrAccountID), Name: r.str(attrName), CreatedAt: r.time(attrCreatedAt)}
	return p, r.err
}

func (s *Config) CreateAccount(ctx context.Context, a voiceops.Account) error {
	it := encodeAccount(a)
	_, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: &s.table, Item: it,
		ConditionExpression: aws.String(condNew), ExpressionAttributeNames: namePK,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	if old, failed := conditionFailed(err); failed {
		if sameItem(old, it) { // an earlier attempt of this call was applied (see applied)
			return nil
		}
		return voiceops.ErrAlreadyExists
	}
	if err != nil {
		return wrap("CreateAccount", err)
	}
	return nil
}

func (s *Config) GetAccount(ctx context.Context, accountID string) (voiceops.Account, error) {
	it, found, err := s.get(ctx, "GetAccount", accountKey(accountID))
	if err != nil || !found {
		return voiceops.Account{}, notFound(err)
	}
	a, err := decodeAccount(it)
	if err != nil {
		return voiceops.Account{}, wrap("GetAccount", err)
	}
	return a, nil
}

// ListAccounts returns every account ordered by ID, from the shared index
// (eventually consistent: an account created a moment ago may be missing).
func (s *Config) ListAccounts(ctx context.Context) ([]voiceops.Account, error) {
	items, err := s.query(ctx, "ListAccounts", &dynamodb.QueryInput{
		TableName: &s.table, IndexName: aws.String(index1.Name),
		KeyConditionExpression:    aws.String("#gpk = :gpk"),
		ExpressionAttributeNames:  map[string]string{"#gpk": attrGSI1PK},
		ExpressionAttributeValues: item{":gpk": avS(gsiAccounts)},
	})
	if err != nil {
		return nil, err
	}
	out := make([]voiceops.Account, 0, len(items))
	for _, it := range items {
		a, err := decodeAccount(it)
		if err != nil {
			return nil, wrap("ListAccounts", err)
		}
		out = append(out, a)
	}
	return out, nil
}

// CreateProject stores a project of an existing account (else ErrNotFound)
// in one transaction.
func (s *Config) CreateProject(ctx context.Context, p voiceops.Project) error {
	o, err := s.transact(ctx, "CreateProject", []types.TransactWriteItem{
		s.txExists(accountKey(p.AccountID)),
		s.txPutNew(encodeProject(p)),
	})
	switch {
	case err != nil:
		return err
	case o.failed[0]:
		return voiceops.ErrNotFound
	case o.failed[1]:
		return voiceops.ErrAlreadyExists
	}
	return nil
}

func (s *Config) GetProject(ctx context.Context, accountID, projectID string) (voiceops.Project, error) {
	it, found, err := s.get(ctx, "GetProject", projectKey(accountID, projectID))
	if err != nil || !found {
		return voiceops.Project{}, notFound(err)
	}
	p, err := decodeProject(it)
	if err != nil {
		return voiceops.Project{}, wrap("GetProject", err)
	}
	return p, nil
}

// ListProjects returns the account's projects ordered by ID.
func (s *Config) ListProjects(ctx context.Context, accountID string) ([]voiceops.Project, error) {
	items, err := s.queryPrefix(ctx, "ListProjects", pkAccount+accountID, skProject)
	if err != nil {
		return nil, err
	}
	out := make([]voiceops.Project, 0, len(items))
	for _, it := range items {
		p, err := decodeProject(it)
		if err != nil {
			return nil, wrap("ListProjects", err)
		}
		out = append(out, p)
	}
	return out, nil
}
