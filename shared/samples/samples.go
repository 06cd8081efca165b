// Package samples holds the data that the sample events in events/ refer
// to, so tests can replay those events through the real Lambda handlers
// against a store that knows their key, account, project and resources.
package samples

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/voiceops/opsapi/shared/agent"
	"github.com/voiceops/opsapi/shared/keys"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// The identifiers used by the files in events/.
const (
	APIKey     = "vo_api_us_zoFi0x6pESKGcLhTveZaOB1ocqrB0ijjrqRL1wzN2RpbNs"
	AccountID  = "acct_demo1"
	ProjectID  = "proj_demo1a"
	RuleID     = "ar_sample1"
	EndpointID = "whe_sample1"
	// InternalKey is the X-Internal-Key of the metric intake's sample
	// events (events/intake-*.json); Seed does not need to store it: the
	// intake holds only its digest (keys.Digest) in api.Deps.
	// AgentToken is the X-TOKEN of the chat samples (a connector of
	// ProjectID, live environment).
	AgentToken = "vo_agent_us_JHT092m21LUJTGc5wfSjNihFXidgCz8EJXXKvNPv0EbpF6"
	// ConversationID is the conversation in progress that the chat and
	// voice samples continue; it started at 2026-11-22T10:00:00Z.
	ConversationID = "conv_17953416000000SampleConversation01"
	InternalKey    = "vo_internal_us_f1IvsFJrwjtHTLocHpkP0Sx2YaMUOkM200KHoVQT0yThzX"
)

// Seed writes the account, project, key, rule and endpoint the sample events
// refer to.
func Seed(ctx context.Context, s voiceops.Stores, now time.Time) error {
	if err := s.Accounts.CreateAccount(ctx, voiceops.Account{ID: AccountID, Name: "Demo", CreatedAt: now}); err != nil {
		return err
	}
	if err := s.Accounts.CreateProject(ctx, voiceops.Project{ID: ProjectID, AccountID: AccountID, Name: "Demo", CreatedAt: now}); err != nil {
		return err
	}
	k := voiceops.Key{ID: "key_sample1", Digest: keys.Digest(APIKey), Prefix: keys.Prefix(APIKey), Kind: voiceops.KeyAPI,
		Region: voiceops.RegionUS, AccountID: AccountID, CreatedAt: now}
	if err := s.Accounts.CreateKey(ctx, k); err != nil {
		return err
	}
	pid := ProjectID
	rule := voiceops.NewRule(RuleID, AccountID, voiceops.RuleInput{Name: "sample", ProjectID: &pid,
		Metric: voiceops.MetricTurnLatencyP95, Operator: voiceops.OpGreater, Threshold: 1500, Window: voiceops.Window5m}, now)
	if err := s.Rules.CreateRule(ctx, rule); err != nil {
		return err
	}
	ep := voiceops.NewEndpoint(EndpointID, AccountID, "whsec_c2FtcGxlIHNlY3JldCBzYW1wbGUgc2VjcmV0IHM=", voiceops.EndpointInput{
		Name: "sample", URL: "https://hooks.example.com/sample", EventTypes: voiceops.EventTypes}, now)
	return s.Endpoints.CreateEndpoint(ctx, ep)
}

// Dir returns the repository's events/ directory.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "events")
}

// HTTPEvents returns the API Gateway HTTP API events whose file names start
// with prefix, by file name.
func HTTPEvents(prefix string) (map[string]events.APIGatewayV2HTTPRequest, error) {
	files, err := filepath.Glob(filepath.Join(Dir(), prefix+"*.json"))
	if err != nil {
		return nil, err
	}
	out := map[string]events.APIGatewayV2HTTPRequest{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var ev events.APIGatewayV2HTTPRequest
		if err := json.Unmarshal(b, &ev); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		out[filepath.Base(f)] = ev
	}
	return out, nil
}

// SeedConversations writes what the chat and voice samples need on top of
// Seed: the demo agent of ProjectID, the agent token, and ConversationID in
// progress (it expires long after now).
func SeedConversations(ctx context.Context, s voiceops.Stores, configs agent.ConfigStore, now time.Time) error {
	if err := configs.PutConfig(ctx, agent.DemoConfig(AccountID, ProjectID)); err != nil {
		return err
	}
	k := voiceops.Key{ID: "key_sample2", Digest: keys.Digest(AgentToken), Prefix: keys.Prefix(AgentToken), Kind: voiceops.KeyAgent,
		Region: voiceops.RegionUS, AccountID: AccountID, ProjectID: ProjectID, Environment: string(voiceops.EnvLive), CreatedAt: now}
	if err := s.Accounts.CreateKey(ctx, k); err != nil {
		return err
	}
	started := time.UnixMilli(1795341600000).UTC()
	c := voiceops.Conversation{
		ID: ConversationID, AccountID: AccountID, ProjectID: ProjectID, Environment: voiceops.EnvLive,
		Channel: voiceops.ChannelVoice, VariantID: "main", VariantName: "Demo IVR", FromNumber: "+441632960001",
		ToNumber: "+441632960002", State: map[string]any{}, StartedAt: started, InProgress: true, NumTurns: 1,
		ExpiresAt: now.Add(24 * time.Hour), Version: 1,
	}
	greeting := voiceops.Turn{Index: 0, UserInputAt: started, AgentResponse: "Welcome to Acme.", AgentResponseAt: started}
	return s.Conversations.CreateConversation(ctx, c, &greeting)
}
