package dynamo

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

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
func (s *Config) AgentConfigs() voiceops.AgentConfigStore { return agentConfigs{s} }

type agentConfigs struct{ s *Config }

var _ voiceops.AgentConfigStore = agentConfigs{}

// PutAgentConfig writes the configuration and checks that its project
// exists, in one transaction: ErrNotFound (and nothing written) when it
// does not.
func (a agentConfigs) PutAgentConfig(ctx context.Context, accountID, projectID string, doc []byte) error {
	s := a.s
	if len(doc) > maxConfigItemBytes {
		return wrap("PutConfig", fmt.Errorf("the configuration is %d bytes of JSON, over %d", len(doc), maxConfigItemBytes))
	}
	it := agentConfigKey(accountID, projectID)
	it[attrAccountID] = avS(accountID)
	it[attrProjectID] = avS(projectID)
	it[attrConfig] = avS(string(doc))
	it[attrUpdatedAt] = avT(s.now())
	o, err := s.transact(ctx, "PutConfig", []types.TransactWriteItem{
		s.txExists(projectKey(accountID, projectID)),
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

// GetAgentConfig reads the configuration item: one GetItem.
func (a agentConfigs) GetAgentConfig(ctx context.Context, accountID, projectID string) ([]byte, error) {
	it, found, err := a.s.get(ctx, "GetConfig", agentConfigKey(accountID, projectID))
	if err != nil || !found {
		return nil, notFound(err)
	}
	r := reader{it: it}
	js := r.str(attrConfig)
	if r.err != nil {
		return nil, wrap("GetConfig", r.err)
	}
	return []byte(js), nil
}
