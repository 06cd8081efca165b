package dynamo

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/voiceops/opsapi/shared/agent"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// A project's agent configuration is one item of the configuration table,
// in its account's partition:
//
//	agent config  pk=ACCT#<acct>  sk=AGENT#<project>  config=<the configuration as JSON>
const (
	skAgentConfig = "AGENT#"
	attrConfig    = "config"
)

// maxConfigItemBytes bounds the JSON of a configuration: DynamoDB items
// hold at most 400 KB, and ParseConfig refuses files over 256 KiB.
const maxConfigItemBytes = 380 << 10

func agentConfigKey(accountID, projectID string) item {
	return key(pkAccount+accountID, skAgentConfig+projectID)
}

// AgentConfigs returns the store of the projects' agent configurations.
func (s *Store) AgentConfigs() agent.ConfigStore { return agentConfigs{s} }

type agentConfigs struct{ s *Store }

var _ agent.ConfigStore = agentConfigs{}

// PutConfig writes the configuration and checks that its project exists,
// in one transaction: ErrNotFound (and nothing written) when it does not.
func (a agentConfigs) PutConfig(ctx context.Context, c agent.Config) error {
	s := a.s
	b, err := json.Marshal(c)
	if err != nil {
		return wrap("PutConfig", err)
	}
	if len(b) > maxConfigItemBytes {
		return wrap("PutConfig", fmt.Errorf("the configuration is %d bytes of JSON, over %d", len(b), maxConfigItemBytes))
	}
	it := agentConfigKey(c.AccountID, c.ProjectID)
	it[attrAccountID] = avS(c.AccountID)
	it[attrProjectID] = avS(c.ProjectID)
	it[attrConfig] = avS(string(b))
	it[attrUpdatedAt] = avT(s.now())
	o, err := s.transact(ctx, "PutConfig", []types.TransactWriteItem{
		s.txExists(projectKey(c.AccountID, c.ProjectID)),
		{Put: &types.Put{TableName: &s.table, Item: it}},
	})
	switch {
	case err != nil:
		return err
	case o.failed[0]:
		return voiceops.ErrNotFound
	case !o.ok():
		return wrap("PutConfig", fmt.Errorf("unexpected condition failure"))
	}
	return nil
}

// GetConfig reads the configuration item: one GetItem.
func (a agentConfigs) GetConfig(ctx context.Context, accountID, projectID string) (agent.Config, error) {
	it, found, err := a.s.get(ctx, "GetConfig", agentConfigKey(accountID, projectID))
	if err != nil || !found {
		return agent.Config{}, notFound(err)
	}
	r := reader{it: it}
	js := r.str(attrConfig)
	if r.err != nil {
		return agent.Config{}, wrap("GetConfig", r.err)
	}
	var c agent.Config
	if err := json.Unmarshal([]byte(js), &c); err != nil {
		return agent.Config{}, wrap("GetConfig", fmt.Errorf("attribute %s of %s/%s: %w", attrConfig, accountID, projectID, err))
	}
	return c, nil
}
