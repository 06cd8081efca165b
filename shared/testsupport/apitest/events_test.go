package apitest

import (
	"github.com/voiceops/opsapi/shared/testsupport/spectest"

	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/conversations/agent"
	"github.com/voiceops/opsapi/shared/conversations/convgraph"
	"github.com/voiceops/opsapi/shared/conversations/eventsapi"
	"github.com/voiceops/opsapi/shared/conversations/hooks"
	"github.com/voiceops/opsapi/shared/metrics"
	"github.com/voiceops/opsapi/shared/metrics/buckets"
	"github.com/voiceops/opsapi/shared/platform/httpapi"
	"github.com/voiceops/opsapi/shared/platform/keys"
	"github.com/voiceops/opsapi/shared/store/memory"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// recordingRunner stands for the project functions: it records each call
// and answers with res or err.
type recordingRunner struct {
	mu    sync.Mutex
	calls []hooks.Call
	res   hooks.Result
	err   error
}

func (r *recordingRunner) Run(_ context.Context, _ hooks.Target, c hooks.Call) (hooks.Result, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, c)
	return r.res, r.err
}

func (r *recordingRunner) last(tb testing.TB) hooks.Call {
	tb.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.calls) == 0 {
		tb.Fatal("no function was called")
	}
	return r.calls[len(r.calls)-1]
}

// eventsHarness is the harness with events keys, the on_external_event and
// on_bridge_ended functions configured for acct_a/proj_a1, and a recording
// function runner.
type eventsHarness struct {
	*harness
	fn      *recordingRunner
	metrics *memory.Metrics
	events  string // events key of acct_a/proj_a1
	events2 string // events key of acct_a/proj_a2
	eventsB string // events key of acct_b/proj_b1
	conv    string // a chat conversation in progress of acct_a/proj_a1
	conv2   string // one of acct_a/proj_a2
}

func newEventsHarness(t *testing.T) *eventsHarness {
	t.Helper()
	h := &eventsHarness{harness: newHarness(t), fn: &recordingRunner{}, metrics: memory.NewMetrics()}
	h.metrics.Now = h.clock.Now
	ctx := context.Background()
	var err error
	for _, k := range []struct {
		dst        *string
		acct, proj string
	}{{&h.events, "acct_a", "proj_a1"}, {&h.events2, "acct_a", "proj_a2"}, {&h.eventsB, "acct_b", "proj_b1"}} {
		if *k.dst, _, err = h.prov.CreateKey(ctx, voiceops.KeyEvents, k.acct, k.proj); err != nil {
			t.Fatal(err)
		}
	}
	cfg := agent.DemoConfig("acct_a", "proj_a1")
	cfg.Functions = map[agent.Hook]agent.FunctionSpec{}
	for _, hook := range []agent.Hook{agent.HookOnExternalEvent, agent.HookOnBridgeEnded} {
		cfg.Functions[hook] = agent.FunctionSpec{URL: "https://fn.example.com/" + string(hook), SigningSecret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}
	}
	if err := agent.PutConfig(ctx, h.store.AgentConfigs(), cfg); err != nil {
		t.Fatal(err)
	}
	// The harness's graph, its engine with a recording function runner
	// and a metric store of its own.
	engine := convgraph.New(convgraph.Deps{Conversations: h.stores.Conversations, Configs: h.store.AgentConfigs(), DNI: h.store.DNI(),
		Metrics: h.metrics, Now: h.clock.Now, Log: suiteLogger()})
	engine.Functions = h.fn
	h.deps.Conversations = engine
	h.h = flushEach(All(h.deps))
	h.conv = h.chat("POST", "/v1/acct_a/proj_a1/chat/create", h.keyA, h.agent, `{}`).Expect(t, 200).JSON(t)["conversation_id"].(string)
	h.conv2 = h.chat("POST", "/v1/acct_a/proj_a2/chat/create", h.keyA, h.agent2, `{}`).Expect(t, 200).JSON(t)["conversation_id"].(string)
	return h
}

// webhookURL is the webhook's address with the given query.
func webhookURL(location, path, acct, proj string) string {
	q := url.Values{}
	for k, v := range map[string]string{"event_id_location": location, "event_id_path": path, "account_id": acct, "project_id": proj} {
		if v != "" {
			q.Set(k, v)
		}
	}
	return "/v1/external-events/webhook?" + q.Encode()
}

// send serves a prepared request, checking the answer against the OpenAPI
// document.
func (h *eventsHarness) send(req *http.Request) response {
	h.t.Helper()
	rec := httptest.NewRecorder()
	h.h.ServeHTTP(rec, req)
	res := response{Status: rec.Code, Header: rec.Header(), Body: rec.Body.Bytes()}
	if err := spectest.Validator(h.t).Check(req, res.Status, res.Header, res.Body); err != nil {
		h.t.Errorf("%s %s -> %d %s: response does not match the OpenAPI document: %v", req.Method, req.URL, res.Status, res.Body, err)
	}
	return res
}

func (h *eventsHarness) state(tb testing.TB, proj, id string) map[string]any {
	tb.Helper()
	c, err := h.stores.Conversations.GetConversation(context.Background(), "acct_a", proj, id)
	if err != nil {
		tb.Fatal(err)
	}
	return c.State
}

func TestExternalEventWebhook(t *testing.T) {
	h := newEventsHarness(t)
	h.fn.res = hooks.Result{State: map[string]any{"payment": "done"}}
	body := `{"data":{"ref":"` + h.conv + `","items":[{"id":"` + h.conv + `"}]},"status":"paid"}`
	cases := []struct {
		name, url, ct, body, header string
	}{
		{"json payload", webhookURL("payload", "data.ref", "acct_a", "proj_a1"), "application/json", body, ""},
		{"json array index", webhookURL("payload", "data.items.0.id", "acct_a", "proj_a1"), "application/json; charset=utf-8", body, ""},
		{"form payload", webhookURL("payload", "ref", "acct_a", "proj_a1"), "application/x-www-form-urlencoded", "ref=" + h.conv + "&status=paid", ""},
		{"xml payload", webhookURL("payload", "event.ref", "acct_a", "proj_a1"), "application/xml", `<?xml version="1.0"?><event><status>paid</status><ref> ` + h.conv + ` </ref></event>`, ""},
		{"header", webhookURL("headers", "X-Provider-Ref", "acct_a", "proj_a1"), "text/plain", "paid", h.conv},
		{"query string", webhookURL("querystring", "ref", "acct_a", "proj_a1") + "&ref=" + h.conv, "text/plain", "paid", ""},
		{"query string without a body", webhookURL("querystring", "ref", "acct_a", "proj_a1") + "&ref=" + h.conv, "", "", ""},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req := httptest.NewRequest("POST", c.url, strings.NewReader(c.body))
			if c.ct != "" {
				req.Header.Set("Content-Type", c.ct)
			}
			req.Header.Set("X-Api-Key", h.events)
			if c.header != "" {
				req.Header.Set("X-Provider-Ref", c.header)
			}
			res := h.send(req).Expect(t, 201).JSON(t)
			if res["status"] != "queued" || res["event_id"] != h.conv || len(res) != 2 {
				t.Errorf("answer %v", res)
			}
			call := h.fn.last(t)
			if len(h.fn.calls) != i+1 || call.Hook != "on_external_event" || call.Extra["event_id"] != h.conv || call.Extra["body"] != c.body ||
				call.Conversation.ID != h.conv || call.Turn != nil {
				t.Errorf("function call %+v", call)
			}
			wantCT, _, _ := strings.Cut(c.ct, ";")
			if call.Extra["content_type"] != wantCT {
				t.Errorf("content_type %v, want %q", call.Extra["content_type"], wantCT)
			}
			st := h.state(t, "proj_a1", h.conv)
			ev, _ := st["external_event"].(map[string]any)
			if st["payment"] != "done" || ev["event_id"] != h.conv || ev["body"] != c.body || ev["content_type"] != wantCT {
				t.Errorf("state %v", st)
			}
		})
	}

	// A failing function: still 201, the event stored, a function error counted.
	h.fn.err = errors.New("boom")
	h.doWith("POST", webhookURL("payload", "ref", "acct_a", "proj_a1"), h.events, `{"ref":"`+h.conv+`","n":1}`, "application/json").Expect(t, 201)
	if ev, _ := h.state(t, "proj_a1", h.conv)["external_event"].(map[string]any); ev["body"] != `{"ref":"`+h.conv+`","n":1}` {
		t.Errorf("event after a failing function: %v", ev)
	}
	bs, err := h.metrics.ReadBuckets(context.Background(), metrics.Scope{AccountID: "acct_a", ProjectID: "proj_a1"}, h.clock.Now().Add(-3600e9), h.clock.Now().Add(60e9))
	if err != nil {
		t.Fatal(err)
	}
	if s := buckets.Summarize(bs, h.clock.Now().Add(-3600e9), h.clock.Now().Add(60e9)); s.Counts.Of(metrics.FunctionErrors) != 1 {
		t.Errorf("function errors %d, want 1", s.Counts.Of(metrics.FunctionErrors))
	}
}

func TestExternalEventWebhookErrors(t *testing.T) {
	h := newEventsHarness(t)
	ok := webhookURL("payload", "ref", "acct_a", "proj_a1")
	good := `{"ref":"` + h.conv + `"}`
	ended := h.chat("POST", "/v1/acct_a/proj_a1/chat/create", h.keyA, h.agent, `{}`).Expect(t, 200).JSON(t)["conversation_id"].(string)
	h.chat("PUT", "/v1/acct_a/proj_a1/chat/close", h.keyA, h.agent, `{"conversation_id":"`+ended+`"}`).Expect(t, 200)
	cases := []struct {
		name, url, key, ct, body string
		status                   int
		msg                      string
	}{
		{"no key", ok, "", "application/json", good, 401, "X-Api-Key"},
		{"api key", ok, h.keyA, "application/json", good, 401, "X-Api-Key"},
		{"agent token", ok, h.agent, "application/json", good, 401, "X-Api-Key"},
		{"unknown events key", ok, keys.New(voiceops.KeyEvents, voiceops.RegionUS), "application/json", good, 401, "X-Api-Key"},
		{"events key of another region", ok, keys.New(voiceops.KeyEvents, voiceops.RegionUK), "application/json", good, 401, "X-Api-Key"},
		{"key of another project", ok, h.events2, "application/json", good, 403, "project"},
		{"key of another account", ok, h.eventsB, "application/json", good, 403, "account"},
		{"no location", webhookURL("", "ref", "acct_a", "proj_a1"), h.events, "application/json", good, 400, "event_id_location is required"},
		{"no path", webhookURL("payload", "", "acct_a", "proj_a1"), h.events, "application/json", good, 400, "event_id_path is required"},
		{"no account", webhookURL("payload", "ref", "", "proj_a1"), h.events, "application/json", good, 400, "account_id is required"},
		{"no project", webhookURL("payload", "ref", "acct_a", ""), h.events, "application/json", good, 400, "project_id is required"},
		{"bad location", webhookURL("cookie", "ref", "acct_a", "proj_a1"), h.events, "application/json", good, 400, "event_id_location must be one of"},
		{"repeated parameter", ok + "&project_id=proj_a1", h.events, "application/json", good, 400, "project_id must be given once"},
		{"unsupported content type", ok, h.events, "application/yaml", good, 400, "Content-Type"},
		{"body without a content type", ok, h.events, "", good, 400, "Content-Type"},
		{"text payload", ok, h.events, "text/plain", h.conv, 400, "text/plain"},
		{"not json", ok, h.events, "application/json", `{"ref":`, 400, "not valid JSON"},
		{"not xml", webhookURL("payload", "a.ref", "acct_a", "proj_a1"), h.events, "application/xml", `<a><ref>x</a>`, 400, "not valid XML"},
		{"no id at the json path", webhookURL("payload", "data.ref", "acct_a", "proj_a1"), h.events, "application/json", good, 400, "event ID not found"},
		{"id is an object", ok, h.events, "application/json", `{"ref":{"a":1}}`, 400, "not a string or a number"},
		{"no id in the form", ok, h.events, "application/x-www-form-urlencoded", "other=1", 400, "event ID not found"},
		{"no id in the xml", webhookURL("payload", "a.ref", "acct_a", "proj_a1"), h.events, "application/xml", `<b><ref>x</ref></b>`, 400, "event ID not found"},
		{"no such header", webhookURL("headers", "X-Ref", "acct_a", "proj_a1"), h.events, "application/json", good, 400, "event ID not found"},
		{"no such query parameter", webhookURL("querystring", "ref", "acct_a", "proj_a1"), h.events, "application/json", good, 400, "event ID not found"},
		{"no body", ok, h.events, "", "", 400, "event ID not found"},
		{"unknown id", ok, h.events, "application/json", `{"ref":"conv_17953416000000xxxxxxxxxxxxxxxxxxxx"}`, 400, "event ID not found or not bound to an active conversation"},
		{"not a conversation id", ok, h.events, "application/json", `{"ref":42}`, 400, "event ID not found or not bound to an active conversation"},
		{"too long id", ok, h.events, "application/json", `{"ref":"` + strings.Repeat("x", 129) + `"}`, 400, "longer than 128"},
		{"conversation of another project", ok, h.events, "application/json", `{"ref":"` + h.conv2 + `"}`, 400, "not bound to an active conversation"},
		{"ended conversation", ok, h.events, "application/json", `{"ref":"` + ended + `"}`, 400, "not bound to an active conversation"},
		{"too large", ok, h.events, "text/plain", strings.Repeat("x", eventsapi.MaxEventBodyBytes+1), 413, "262144"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := h.doWith("POST", c.url, c.key, c.body, c.ct).Expect(t, c.status)
			if msg, _ := res.JSON(t)["error_message"].(string); !strings.Contains(msg, c.msg) {
				t.Errorf("error_message %q, want it to contain %q", msg, c.msg)
			}
		})
	}
	if len(h.fn.calls) != 0 {
		t.Errorf("functions ran for refused events: %+v", h.fn.calls)
	}
	// Exactly the limit is accepted.
	h.doWith("POST", webhookURL("querystring", "ref", "acct_a", "proj_a1")+"&ref="+h.conv, h.events, strings.Repeat("x", eventsapi.MaxEventBodyBytes), "text/plain").Expect(t, 201)
	h.doWith("GET", ok, h.events, nil, "").Expect(t, 405)
}

func TestBridgeEnded(t *testing.T) {
	h := newEventsHarness(t)
	h.fn.res = hooks.Result{State: map[string]any{"survey": "sent"}}
	const path = "/internal/v1/agentic-dial/bridge-ended"
	// A handoff ends the conversation before the bridged call ends, 90 s later.
	h.chat("POST", "/v1/acct_a/proj_a1/chat/respond", h.keyA, h.agent, `{"conversation_id":"`+h.conv+`","message":"I want a human"}`).Expect(t, 200)
	h.clock.Advance(90 * time.Second)
	res := h.doWith("POST", path, h.events, `{"conversation_id":"`+h.conv+`","bridge_duration_seconds":42.5,"call_duration_seconds":90}`, "application/json").Expect(t, 200).JSON(t)
	if res["success"] != true || len(res) != 1 {
		t.Errorf("answer %v", res)
	}
	call := h.fn.last(t)
	if call.Hook != "on_bridge_ended" || call.Extra["bridge_duration_seconds"] != 42.5 || call.Extra["call_duration_seconds"] != 90.0 || len(call.Extra) != 2 {
		t.Errorf("function call %+v", call)
	}
	st := h.state(t, "proj_a1", h.conv)
	b, _ := st["bridge"].(map[string]any)
	if b["ended"] != true || b["bridge_duration_seconds"] != 42.5 || b["call_duration_seconds"] != 90.0 || st["survey"] != "sent" {
		t.Errorf("state %v", st)
	}
	// Once per conversation: a second notification is 409 and changes nothing.
	again := h.doWith("POST", path, h.events, `{"conversation_id":"`+h.conv+`","bridge_duration_seconds":0,"call_duration_seconds":0}`, "application/json").Expect(t, 409)
	if msg, _ := again.JSON(t)["error_message"].(string); !strings.Contains(msg, "already recorded") {
		t.Errorf("second notification: %s", again.Body)
	}
	if b, _ := h.state(t, "proj_a1", h.conv)["bridge"].(map[string]any); b["call_duration_seconds"] != 90.0 {
		t.Errorf("bridge %v", b)
	}

	body := func(kv ...any) map[string]any {
		return with(map[string]any{"conversation_id": h.conv, "bridge_duration_seconds": 1, "call_duration_seconds": 2}, kv...)
	}
	cases := []struct {
		name, key string
		body      any
		ct        string
		status    int
		msg       string
	}{
		{"no key", "", body(), "application/json", 401, "X-Api-Key"},
		{"api key", h.keyA, body(), "application/json", 401, "X-Api-Key"},
		{"conversation of another project", h.events2, body(), "application/json", 404, "conversation not found"},
		{"conversation of another account", h.eventsB, body(), "application/json", 404, "conversation not found"},
		{"unknown conversation", h.events, body("conversation_id", "conv_17953416000000xxxxxxxxxxxxxxxxxxxx"), "application/json", 404, "conversation not found"},
		{"missing conversation_id", h.events, body("conversation_id", deleteField), "application/json", 400, "conversation_id is required"},
		{"missing bridge duration", h.events, body("bridge_duration_seconds", deleteField), "application/json", 400, "bridge_duration_seconds is required"},
		{"missing call duration", h.events, body("call_duration_seconds", deleteField), "application/json", 400, "call_duration_seconds is required"},
		{"negative", h.events, body("call_duration_seconds", -1), "application/json", 400, "call_duration_seconds must be a number"},
		{"string number", h.events, body("bridge_duration_seconds", "5"), "application/json", 400, "bridge_duration_seconds must be a number"},
		{"null", h.events, body("bridge_duration_seconds", nil), "application/json", 400, "bridge_duration_seconds must not be null"},
		{"unknown field", h.events, body("extra", 1), "application/json", 400, "extra is not a known field"},
		{"not json", h.events, `{"conversation_id":`, "application/json", 400, "JSON object"},
		{"wrong content type", h.events, body(), "text/plain", 400, "Content-Type"},
		{"too large", h.events, `{"x":"` + strings.Repeat("x", httpapi.MaxBodyBytes) + `"}`, "application/json", 413, "1048576"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := h.doWith("POST", path, c.key, c.body, c.ct).Expect(t, c.status)
			if msg, _ := res.JSON(t)["error_message"].(string); !strings.Contains(msg, c.msg) {
				t.Errorf("error_message %q, want it to contain %q", msg, c.msg)
			}
		})
	}
	if len(h.fn.calls) != 1 {
		t.Errorf("%d function calls, want 1", len(h.fn.calls))
	}
}
