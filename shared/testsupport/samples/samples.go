// Package samples holds the data that the sample events in events/ refer
// to, so tests can replay those events through the real Lambda handlers
// against a store that knows their key, account, project and resources.
package samples

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/voiceops/opsapi/shared/alerts/delivery"
	"github.com/voiceops/opsapi/shared/conversations/agent"
	"github.com/voiceops/opsapi/shared/conversations/conversation"
	"github.com/voiceops/opsapi/shared/conversations/convgraph"
	"github.com/voiceops/opsapi/shared/metrics"
	"github.com/voiceops/opsapi/shared/metrics/buckets"
	"github.com/voiceops/opsapi/shared/platform/auth"
	"github.com/voiceops/opsapi/shared/platform/httpapi"
	"github.com/voiceops/opsapi/shared/platform/keys"
	"github.com/voiceops/opsapi/shared/platform/queue"
	"github.com/voiceops/opsapi/shared/store/memory"
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
	// HandedOffID is the conversation that handed off after a minute, whose
	// bridge the bridge-ended sample ends.
	HandedOffID = "conv_17953416000000SampleConversation02"
	InternalKey = "vo_internal_us_f1IvsFJrwjtHTLocHpkP0Sx2YaMUOkM200KHoVQT0yThzX"
	// EventsKey is the X-Api-Key (events key of ProjectID) of the external
	// events and bridge-ended samples (events/events-*.json).
	EventsKey = "vo_events_us_CqhXoFwEhhS5W3D96jHdYUcSKsHJHlLi5JIKgAlK1kIQSQ"
	// ServiceKey is the X-Service-Auth-Token (service key of ProjectID) of
	// the outbound calling samples (events/calls-outbound-*.json).
	ServiceKey = "vo_service_us_pOBlliV0kVt2W3XLQAmiuoOFeLbUKOm9oPptMqKk0dBiMA"
	// CallSID is the queued outbound call of ProjectID that the status
	// samples read and move.
	CallSID = "CA91d5f595f5e7b98eaf0556553f5c46cb"
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
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "events")
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
// Seed: the demo agent of ProjectID, the agent token, the events key, and
// ConversationID in progress (it expires long after now).
func SeedConversations(ctx context.Context, s voiceops.Stores, configs voiceops.AgentConfigStore, now time.Time) error {
	if err := agent.PutConfig(ctx, configs, agent.DemoConfig(AccountID, ProjectID)); err != nil {
		return err
	}
	k := voiceops.Key{ID: "key_sample2", Digest: keys.Digest(AgentToken), Prefix: keys.Prefix(AgentToken), Kind: voiceops.KeyAgent,
		Region: voiceops.RegionUS, AccountID: AccountID, ProjectID: ProjectID, Environment: string(voiceops.EnvLive), CreatedAt: now}
	if err := s.Accounts.CreateKey(ctx, k); err != nil {
		return err
	}
	ek := voiceops.Key{ID: "key_sample3", Digest: keys.Digest(EventsKey), Prefix: keys.Prefix(EventsKey), Kind: voiceops.KeyEvents,
		Region: voiceops.RegionUS, AccountID: AccountID, ProjectID: ProjectID, CreatedAt: now}
	if err := s.Accounts.CreateKey(ctx, ek); err != nil {
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

// SeedHandedOff writes the conversation of the bridge-ended sample:
// HandedOffID, a call that handed off a minute after it started (SeedConversations
// first: same account and project).
func SeedHandedOff(ctx context.Context, s voiceops.Stores, now time.Time) error {
	started := time.UnixMilli(1795341600000).UTC()
	ended := started.Add(time.Minute)
	c := voiceops.Conversation{
		ID: HandedOffID, AccountID: AccountID, ProjectID: ProjectID, Environment: voiceops.EnvLive,
		Channel: voiceops.ChannelVoice, VariantID: "main", VariantName: "Demo IVR", FromNumber: "+441632960001",
		ToNumber: "+441632960002", State: map[string]any{}, StartedAt: started, EndedAt: &ended, EndReason: voiceops.EndHandoff,
		Handoff: true, HandoffDestination: "support-queue", HandoffReason: "caller asked for a human", NumTurns: 1,
		ExpiresAt: now.Add(24 * time.Hour), Version: 1,
	}
	greeting := voiceops.Turn{Index: 0, UserInputAt: started, AgentResponse: "Welcome to Acme.", AgentResponseAt: started}
	return s.Conversations.CreateConversation(ctx, c, &greeting)
}

// SeedCalls writes what the outbound calling samples need: the service key
// of ProjectID and the queued call CallSID.
func SeedCalls(ctx context.Context, s voiceops.Stores, calls voiceops.CallStore, now time.Time) error {
	k := voiceops.Key{ID: "key_sample4", Digest: keys.Digest(ServiceKey), Prefix: keys.Prefix(ServiceKey), Kind: voiceops.KeyService,
		Region: voiceops.RegionUS, AccountID: AccountID, ProjectID: ProjectID, CreatedAt: now}
	if err := s.Accounts.CreateKey(ctx, k); err != nil {
		return err
	}
	return calls.CreateCall(ctx, voiceops.Call{SID: CallSID, AccountID: AccountID, ProjectID: ProjectID, ToNumber: "+447911123456",
		Metadata: map[string]any{"first_name": "Ada"}, Status: voiceops.CallQueued, CreatedAt: now, UpdatedAt: now})
}

// Lambda is a function's Lambda handler of HTTP API requests.
type Lambda = func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error)

// Replay sends every events/<Prefix>*.json through a function's real Lambda
// handler, so that the samples SAM users invoke never rot.
type Replay struct {
	Prefix string
	// Want is each file's status. A file missing from it, or named in it
	// and missing from events/, fails the test, so no sample goes
	// unreplayed.
	Want map[string]int
	// Handler builds the handler for one file, fresh for each.
	Handler func(t *testing.T, name string) Lambda
	// Check, when set, checks an answer further (its body, what it stored).
	Check func(t *testing.T, name string, res events.APIGatewayV2HTTPResponse)
}

// Run replays the files: each answers its status, with a JSON body (unless
// 204) and an X-Request-Id.
func (r Replay) Run(t *testing.T) {
	t.Helper()
	evs, err := HTTPEvents(r.Prefix)
	if err != nil {
		t.Fatal(err)
	}
	for name := range r.Want {
		if _, ok := evs[name]; !ok {
			t.Errorf("events/%s is missing", name)
		}
	}
	for name, ev := range evs {
		t.Run(name, func(t *testing.T) {
			status, ok := r.Want[name]
			if !ok {
				t.Fatalf("no expected status for events/%s: add it to the test's table", name)
			}
			res, err := r.Handler(t, name)(context.Background(), ev)
			if err != nil {
				t.Fatal(err)
			}
			if res.StatusCode != status {
				t.Fatalf("status %d, want %d: %s", res.StatusCode, status, res.Body)
			}
			if res.StatusCode != 204 && !json.Valid([]byte(res.Body)) {
				t.Errorf("body is not JSON: %s", res.Body)
			}
			if res.Headers["X-Request-Id"] == "" {
				t.Errorf("no X-Request-Id in %v", res.Headers)
			}
			if r.Check != nil {
				r.Check(t, name, res)
			}
		})
	}
}

// ReplayHTTP replays events/<prefix>*.json (Replay) through the handler
// newHandler builds on a fresh seeded Memory for each file.
func ReplayHTTP(t *testing.T, prefix string, want map[string]int, newHandler func(t *testing.T, m *Memory) Lambda) {
	t.Helper()
	Replay{Prefix: prefix, Want: want, Handler: func(t *testing.T, _ string) Lambda {
		return newHandler(t, NewMemory(t))
	}}.Run(t)
}

// Memory is the in-memory world the functions' replay tests run their
// handlers on: fresh stores seeded with everything the samples refer to
// (Seed, SeedConversations, SeedDNI and SeedCalls).
type Memory struct {
	Store   *memory.Store
	Stores  voiceops.Stores
	Calls   *memory.Calls
	Metrics *buckets.Recorder
	Auth    *auth.Authenticator
	Engine  *conversation.Engine
	Outbox  *delivery.Outbox
	Log     *slog.Logger
	// InternalKeyDigest is the digest of InternalKey.
	InternalKeyDigest string
}

// CountError records an api_errors event on m.Metrics (httpapi.Config.CountError).
func (m *Memory) CountError(ctx context.Context, accountID, projectID string, at time.Time) error {
	return m.Metrics.Record(ctx, metrics.Count(metrics.APIErrors, accountID, projectID, at))
}

// HTTP is the functions' HTTP platform on m (dynamohttp.Config deployed):
// the sample keys, api_errors on m.Metrics, the wall clock and m.Log.
func (m *Memory) HTTP() httpapi.Config {
	return httpapi.Config{Keys: m.Auth, CountError: m.CountError, Now: time.Now, Log: m.Log}
}

// NewMemory returns a seeded Memory.
func NewMemory(t *testing.T) *Memory {
	t.Helper()
	ctx := context.Background()
	now := time.Now().UTC()
	store := memory.New()
	stores := store.Stores()
	if err := Seed(ctx, stores, now); err != nil {
		t.Fatal(err)
	}
	if err := SeedConversations(ctx, stores, store.AgentConfigs(), now); err != nil {
		t.Fatal(err)
	}
	if err := SeedDNI(ctx, stores, store.DNI(), now); err != nil {
		t.Fatal(err)
	}
	calls := memory.NewCalls()
	if err := SeedCalls(ctx, stores, calls, now); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	metricStore := memory.NewMetrics()
	return &Memory{
		Store: store, Stores: stores, Calls: calls, Metrics: &buckets.Recorder{Store: metricStore}, Log: log,
		Auth:   auth.New(stores.Accounts, voiceops.RegionUS, time.Now),
		Outbox: delivery.NewOutbox(stores, discardQueue{}, time.Now),
		// The functions' own engine graph, on memory stores.
		Engine: convgraph.New(convgraph.Deps{Conversations: stores.Conversations, Configs: store.AgentConfigs(), DNI: store.DNI(),
			Metrics: metricStore, Now: time.Now, Log: log}),
		InternalKeyDigest: keys.Digest(InternalKey),
	}
}

// discardQueue accepts messages and drops them: the replay tests check the
// handlers' answers, not deliveries.
type discardQueue struct{}

func (discardQueue) Send(context.Context, queue.Message, time.Duration) error { return nil }
