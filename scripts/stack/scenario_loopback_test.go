//go:build stack

package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/voiceops/opsapi/shared/conversations/agent"
	"github.com/voiceops/opsapi/shared/ops/provision"
	"github.com/voiceops/opsapi/shared/store/dynamo"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// loopbackProject is a project of its own (account 1), created as the
// operator does, whose scripted demo agent has the functions of hooks on a
// loopback receiver, loaded through the parse and store opsctl uses with
// loopback URLs allowed (as the stack runs with -allow-loopback-webhooks).
type loopbackProject struct {
	account, project              string
	apiKey, agentToken, eventsKey string
	fn                            *functionReceiver
}

func newLoopbackProject(t *testing.T, projectID string, idleSeconds int, answers map[agent.Hook]map[string]any) *loopbackProject {
	t.Helper()
	ctx := context.Background()
	db := dynamo.NewStores(dynamodb.NewFromConfig(st.AWS), st.Topology.TableNames())
	lp := &loopbackProject{account: st.Credentials.Accounts[1].AccountID, project: projectID}
	p := provision.Provisioner{Accounts: db.Accounts, Region: voiceops.Region(st.Credentials.Region), Now: time.Now}
	if _, err := p.CreateProject(ctx, lp.account, projectID, "Loopback functions scenario"); err != nil {
		t.Fatalf("creating project %s: %v", projectID, err)
	}
	for _, k := range []struct {
		kind voiceops.KeyKind
		dst  *string
	}{{voiceops.KeyAPI, &lp.apiKey}, {voiceops.KeyAgent, &lp.agentToken}, {voiceops.KeyEvents, &lp.eventsKey}} {
		secret, _, err := p.CreateKey(ctx, k.kind, lp.account, projectID)
		if err != nil {
			t.Fatal(err)
		}
		*k.dst = secret
	}

	raw := make([]byte, 32)
	_, _ = rand.Read(raw)
	secret := "whsec_" + base64.StdEncoding.EncodeToString(raw)
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	lp.fn = &functionReceiver{wh: wh, answer: func(c functionCall) any { return answers[agent.Hook(c.Hook)] }}
	srv := httptest.NewServer(lp.fn)
	t.Cleanup(srv.Close)

	cfg := agent.DemoConfig(lp.account, projectID)
	cfg.ChatIdleTimeoutSeconds = idleSeconds
	cfg.Functions = map[agent.Hook]agent.FunctionSpec{}
	for hook := range answers {
		cfg.Functions[hook] = agent.FunctionSpec{URL: srv.URL + "/" + string(hook), SigningSecret: secret, TimeoutMS: 3000}
	}
	parsed, err := agent.ParseConfig(mustJSON(t, cfg), voiceops.URLPolicy{AllowLoopback: true})
	if err != nil {
		t.Fatalf("the loopback project's configuration: %v", err)
	}
	names := st.Topology.TableNames()
	if err := agent.PutConfig(ctx, dynamo.NewConfig(dynamodb.NewFromConfig(st.AWS), names.Config, names.Deliveries).AgentConfigs(), parsed); err != nil {
		t.Fatal(err)
	}
	return lp
}

// startChat starts a webchat conversation of the project (chat function).
func (lp *loopbackProject) startChat(t *testing.T) string {
	t.Helper()
	var created struct {
		ConversationID string `json:"conversation_id"`
	}
	u := st.Credentials.BaseURL + "/v1/" + lp.account + "/" + lp.project + "/chat/create"
	if code, _, b := call(t, "POST", u, map[string]string{"X-API-KEY": lp.apiKey, "X-TOKEN": lp.agentToken},
		map[string]any{"channel": "webchat"}, &created); code != 200 || created.ConversationID == "" {
		t.Fatalf("chat create: %d %s", code, b)
	}
	return created.ConversationID
}

// stored reads the conversation as the table holds it, through no
// function (a read through the API could end an idle chat itself).
func (lp *loopbackProject) stored(t *testing.T, id string) voiceops.Conversation {
	t.Helper()
	c, err := dynamo.NewStores(dynamodb.NewFromConfig(st.AWS), st.Topology.TableNames()).Conversations.GetConversation(context.Background(), lp.account, lp.project, id)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// An external event pushed into a live chat through the events function
// runs the project's on_external_event function on a loopback receiver
// (the runner sets VOICEOPS_LOCAL_ALLOW_LOOPBACK on the functions): the
// receiver gets one signed call with the event, and the conversation
// stores the event's record together with the state and metric the
// function answered.
func TestExternalEventCallsLoopbackFunction(t *testing.T) {
	lp := newLoopbackProject(t, "proj_loopback_events", 0, map[agent.Hook]map[string]any{
		agent.HookOnExternalEvent: {"state": map[string]any{"payment": "confirmed"}, "metrics": map[string]any{"PAYMENT": "ok"}},
	})
	convID := lp.startChat(t)
	body := `{"ref":"` + convID + `","payment":"ok"}`
	webhook := st.Credentials.BaseURL + "/v1/external-events/webhook?" + url.Values{"event_id_location": {"payload"}, "event_id_path": {"ref"},
		"account_id": {lp.account}, "project_id": {lp.project}}.Encode()
	var answer struct {
		Status  string `json:"status"`
		EventID string `json:"event_id"`
	}
	if code, _, b := call(t, "POST", webhook, map[string]string{"X-Api-Key": lp.eventsKey}, json.RawMessage(body), &answer); code != http.StatusCreated ||
		answer.Status != "queued" || answer.EventID != convID {
		t.Fatalf("external event: %d %s, want 201 queued for %s", code, b, convID)
	}
	// The function runs within the request: its call is in before the answer.
	if calls := lp.fn.taken(); len(calls) != 1 {
		t.Errorf("the receiver got %d calls, want the one on_external_event call (is AllowLoopback passed to the events function's engine?)", len(calls))
	} else {
		c := calls[0]
		wantExtra := map[string]any{"event_id": convID, "content_type": "application/json", "body": body}
		if c.Hook != string(agent.HookOnExternalEvent) || c.Conv.ID != convID || c.Conv.Channel != "webchat" || !reflect.DeepEqual(c.Extra, wantExtra) {
			t.Errorf("the call: hook %s, conversation %s on %s, extra %v; want on_external_event of %s on webchat, extra %v",
				c.Hook, c.Conv.ID, c.Conv.Channel, c.Extra, convID, wantExtra)
		}
		if c.verified != nil {
			t.Errorf("the call's signature does not verify: %v", c.verified)
		}
	}
	conv := lp.stored(t, convID)
	record, _ := conv.State["external_event"].(map[string]any)
	if !conv.InProgress || conv.State["payment"] != "confirmed" || record["event_id"] != convID || record["body"] != body {
		t.Errorf("stored: in progress %v, state %v; want in progress, payment confirmed by the function, and the event's record", conv.InProgress, conv.State)
	}
	if !slices.Contains(conv.Metrics, voiceops.CustomMetric{Name: "PAYMENT", Value: "ok"}) {
		t.Errorf("stored metrics %v, want the function's PAYMENT ok", conv.Metrics)
	}
}

// A chat left idle past its project's 2 s bound is ended by the scheduled
// sweeper (every 2 s on this run), whose end runs the project's on_end
// function on a loopback receiver: one signed call with reason timeout,
// and the ended conversation stores the state the function answered.
// Nothing else touches the chat after its start (the test reads the table
// directly), so the end, and the call, are the sweeper's.
func TestIdleEndBySweeperCallsLoopbackFunction(t *testing.T) {
	lp := newLoopbackProject(t, "proj_loopback_idle", 2, map[agent.Hook]map[string]any{
		agent.HookOnEnd: {"state": map[string]any{"farewell": "sent"}},
	})
	convID := lp.startChat(t)
	deadline := time.Now().Add(30 * time.Second)
	var conv voiceops.Conversation
	for {
		if conv = lp.stored(t, convID); !conv.InProgress {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the sweeper did not end the idle chat within 30 s")
		}
		time.Sleep(250 * time.Millisecond)
	}
	if conv.EndReason != voiceops.EndTimeout || conv.EndedAt == nil || !conv.EndedAt.Equal(conv.IdleDue.UTC().Truncate(time.Millisecond)) {
		t.Errorf("ended with %q at %v, want timeout at its idle due %v", conv.EndReason, conv.EndedAt, conv.IdleDue)
	}
	// on_end runs before the end's write: its call is in already. Sweeps
	// that overlap (the runner's schedule is every 2 s; a busy machine's
	// sweep takes longer) may each run it before one of their writes wins:
	// at least once, every call the same end (docs/conversations.md).
	calls := lp.fn.taken()
	if len(calls) == 0 {
		t.Errorf("the receiver got no call, want the on_end call (is AllowLoopback passed to the sweeper's engine?)")
	}
	for _, c := range calls {
		if c.Hook != string(agent.HookOnEnd) || c.Conv.ID != convID || !reflect.DeepEqual(c.Extra, map[string]any{"reason": string(voiceops.EndTimeout)}) {
			t.Errorf("a call: hook %s, conversation %s, extra %v; want on_end of %s with reason timeout", c.Hook, c.Conv.ID, c.Extra, convID)
		}
		if c.verified != nil {
			t.Errorf("a call's signature does not verify: %v", c.verified)
		}
	}
	if len(calls) > 1 {
		t.Logf("on_end was called %d times: overlapping sweeps", len(calls))
	}
	if conv.State["farewell"] != "sent" {
		t.Errorf("stored state %v, want the on_end function's farewell sent", conv.State)
	}
}
