package dynamo_test

import (
	"context"
	"io"
	"log/slog"
	"maps"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/voiceops/opsapi/shared/alerts/alerting"
	"github.com/voiceops/opsapi/shared/alerts/studioapi"
	"github.com/voiceops/opsapi/shared/conversations/agent"
	"github.com/voiceops/opsapi/shared/conversations/chatapi"
	"github.com/voiceops/opsapi/shared/conversations/convgraph"
	"github.com/voiceops/opsapi/shared/ops/provision"
	"github.com/voiceops/opsapi/shared/platform/auth"
	"github.com/voiceops/opsapi/shared/platform/httpapi"
	"github.com/voiceops/opsapi/shared/store/dynamo"
	"github.com/voiceops/opsapi/shared/store/dynamo/metricstore"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// TestDynamoCallsPerRequest drives the real HTTP stack on the DynamoDB store
// and counts the SDK calls each request makes once the key cache is warm:
// GET by ID 2 and list 2 (the rules and the evaluation marks), create 1
// (one transaction, with the rule's wake-up), PATCH at most 2.
func TestDynamoCallsPerRequest(t *testing.T) {
	c := client(t)
	db := &countingDB{DB: c}
	stores := dynamo.NewStores(db, newTables(t, c))
	ctx := context.Background()
	prov := provision.Provisioner{Accounts: stores.Accounts, Region: voiceops.RegionUS, Now: time.Now}
	if _, err := prov.CreateAccount(ctx, "acct_calls", "calls"); err != nil {
		t.Fatal(err)
	}
	if _, err := prov.CreateProject(ctx, "acct_calls", "proj_calls", "calls"); err != nil {
		t.Fatal(err)
	}
	key, _, err := prov.CreateKey(ctx, voiceops.KeyAPI, "acct_calls", "")
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	svc := &alerting.Service{Rules: stores.Rules, Endpoints: stores.Endpoints, Now: time.Now, Log: log}
	h := httpapi.New(httpapi.Config{Keys: auth.New(stores.Accounts, voiceops.RegionUS, time.Now), Now: time.Now, Log: log},
		(&studioapi.Alerts{Rules: alerting.WithMarks(stores.Rules, stores.Evaluations), Service: svc}).Routes(),
		(&studioapi.Webhooks{Endpoints: stores.Endpoints, Deliveries: stores.Deliveries, Service: svc}).Routes())
	do := func(method, path, body string) (int, string) {
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		req.Header.Set("x-api-key", key)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code, rec.Body.String()
	}
	// Warm the key cache: the first request reads the key once.
	db.take()
	if st, _ := do("GET", "/v1/alert-rules", ""); st != 200 {
		t.Fatalf("warm-up: %d", st)
	}
	// The rules and the evaluator's marks are read in parallel, even when
	// the account has no rule yet (waiting for the first would cost a
	// round trip on every list).
	if got := db.take(); got["GetItem"] != 1 || got["Query"] != 2 {
		t.Errorf("cold list: %v, want one key read and two queries", got)
	}

	st, body := do("POST", "/v1/alert-rules", `{"name":"n","metric":"api_errors","operator":">","threshold_value":1,"window_duration":"5m","project_id":"proj_calls"}`)
	if st != 201 {
		t.Fatalf("create: %d %s", st, body)
	}
	id := body[strings.Index(body, `"id":"`)+6:]
	id = id[:strings.IndexByte(id, '"')]
	type step struct {
		name, method, path, body string
		status                   int
		want                     map[string]int
		maxCalls                 int
	}
	// The create above already ran; check its count first.
	if got := db.take(); !maps.Equal(got, map[string]int{"TransactWriteItems": 1}) {
		t.Errorf("create: %v, want one TransactWriteItems", got)
	}
	for _, s := range []step{
		// Reads take one more call, in parallel: the account's evaluation
		// marks, which keep last_evaluated_at truthful without a write per
		// rule per evaluation (docs/alerting.md).
		{"get", "GET", "/v1/alert-rules/" + id, "", 200, map[string]int{"GetItem": 1, "Query": 1}, 2},
		{"list", "GET", "/v1/alert-rules", "", 200, map[string]int{"Query": 2}, 2},
		{"active alerts", "GET", "/v1/alerts", "", 200, map[string]int{"Query": 2}, 2},
		{"patch", "PATCH", "/v1/alert-rules/" + id, `{"threshold_value":5}`, 200, nil, 2},
		{"patch project", "PATCH", "/v1/alert-rules/" + id, `{"project_id":"proj_calls","name":"m"}`, 200, nil, 2},
		{"patch nothing", "PATCH", "/v1/alert-rules/" + id, `{}`, 200, map[string]int{"GetItem": 1}, 1},
		{"invalid create", "POST", "/v1/alert-rules", `{"name":""}`, 422, map[string]int{}, 0},
		{"create endpoint", "POST", "/v1/webhook-endpoints", `{"name":"e","url":"https://hooks.example.com/","event_types":["alerts.triggered"]}`, 201, map[string]int{"TransactWriteItems": 1}, 1},
		{"list endpoints", "GET", "/v1/webhook-endpoints", "", 200, map[string]int{"Query": 1}, 1},
	} {
		st, body := do(s.method, s.path, s.body)
		if st != s.status {
			t.Errorf("%s: %d %s", s.name, st, body)
		}
		got := db.take()
		total := 0
		for _, n := range got {
			total += n
		}
		if total > s.maxCalls || (s.want != nil && !maps.Equal(got, s.want)) {
			t.Errorf("%s: DynamoDB calls %v, want %v (at most %d)", s.name, got, s.want, s.maxCalls)
		}
		t.Logf("%-16s %v", s.name, got)
	}
}

// countingMetricsCalls counts the metric store's calls.
type countingMetricsCalls struct {
	metricstore.DB
	c *countingDB
}

func (m countingMetricsCalls) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, o ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	m.c.count("MetricUpdateItem")
	return m.DB.UpdateItem(ctx, in, o...)
}

// TestDynamoCallsPerChatTurn counts the DynamoDB calls of a warm chat turn
// through the HTTP stack: one read (the conversation), and two writes (the
// turn with the conversation, in one transaction; the turn's metrics: one
// UpdateItem per scope, account and project, at once).
func TestDynamoCallsPerChatTurn(t *testing.T) {
	c := client(t)
	db := &countingDB{DB: c}
	names := newTables(t, c)
	store := dynamo.NewConfig(db, names.Config, names.Deliveries)
	stores := dynamo.NewStores(db, names)
	ctx := context.Background()
	prov := provision.Provisioner{Accounts: stores.Accounts, Region: voiceops.RegionUS, Now: time.Now}
	if _, err := prov.CreateAccount(ctx, "acct_chat", "chat"); err != nil {
		t.Fatal(err)
	}
	if _, err := prov.CreateProject(ctx, "acct_chat", "proj_chat", "chat"); err != nil {
		t.Fatal(err)
	}
	if err := agent.PutConfig(ctx, store.AgentConfigs(), agent.DemoConfig("acct_chat", "proj_chat")); err != nil {
		t.Fatal(err)
	}
	key, _, err := prov.CreateKey(ctx, voiceops.KeyAPI, "acct_chat", "proj_chat")
	if err != nil {
		t.Fatal(err)
	}
	tok, _, err := prov.CreateKey(ctx, voiceops.KeyAgent, "acct_chat", "proj_chat")
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	engine := convgraph.New(convgraph.Deps{Conversations: stores.Conversations, Configs: store.AgentConfigs(),
		Metrics: metricstore.New(countingMetricsCalls{DB: c, c: db}, names.Metrics), Now: time.Now, Log: log})
	h := httpapi.New(httpapi.Config{Keys: auth.New(stores.Accounts, voiceops.RegionUS, time.Now), Projects: stores.Accounts, Now: time.Now, Log: log},
		(&chatapi.Chat{Engine: engine}).Routes())
	do := func(method, path, body string) (int, string) {
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		req.Header.Set("X-API-KEY", key)
		req.Header.Set("X-TOKEN", tok)
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code, rec.Body.String()
	}
	st, body := do("POST", "/v1/acct_chat/proj_chat/chat/create", `{}`)
	if st != 200 {
		t.Fatalf("create: %d %s", st, body)
	}
	id := body[strings.Index(body, `"conversation_id":"`)+19:]
	id = id[:strings.IndexByte(id, '"')]
	db.take() // keys, configuration and creation are behind us: the function is warm
	for i := 0; i < 3; i++ {
		if st, body := do("POST", "/v1/acct_chat/proj_chat/chat/respond", `{"conversation_id":"`+id+`","message":"balance"}`); st != 200 {
			t.Fatalf("respond: %d %s", st, body)
		}
		got := db.take()
		// The turn and the conversation's commit (shared/store/dynamo/turnwrite.go).
		want := map[string]int{"GetItem": 1, "PutItem": 2, "MetricUpdateItem": 2}
		if !maps.Equal(got, want) {
			t.Errorf("turn %d: DynamoDB calls %v, want %v (1 read, 4 writes)", i, got, want)
		}
	}
}
