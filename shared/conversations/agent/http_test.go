package agent_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/voiceops/opsapi/shared/alerts/webhook"
	"github.com/voiceops/opsapi/shared/conversations/agent"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// endpoint is a project's agent endpoint: an httptest TLS server on
// 127.0.0.1 that records the requests it gets.
type endpoint struct {
	srv  *httptest.Server
	mu   sync.Mutex
	reqs []seen
}

type seen struct {
	method, path, query string
	header              http.Header
	body                []byte
}

func newEndpoint(t *testing.T, h http.HandlerFunc) *endpoint {
	t.Helper()
	e := &endpoint{}
	e.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		e.mu.Lock()
		e.reqs = append(e.reqs, seen{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Clone(), body})
		e.mu.Unlock()
		h(w, r)
	}))
	e.srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	e.srv.StartTLS()
	t.Cleanup(e.srv.Close)
	return e
}

func (e *endpoint) requests() []seen {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]seen(nil), e.reqs...)
}

// client is the guarded client of the dev server (loopback allowed),
// trusting the endpoint's certificate.
func (e *endpoint) client(allowLoopback bool) *http.Client {
	pool := x509.NewCertPool()
	pool.AddCert(e.srv.Certificate())
	return webhook.NewClient(webhook.Options{AllowLoopback: allowLoopback, TLSConfig: &tls.Config{RootCAs: pool}})
}

// agent returns the HTTP agent of the endpoint; the URL carries a token
// that no error may show.
func (e *endpoint) agent(t *testing.T, timeoutMS int, client *http.Client) agent.Agent {
	t.Helper()
	a, err := agent.New(agent.AgentSpec{Type: agent.TypeHTTP, HTTP: &agent.HTTPSpec{
		URL: e.srv.URL + "/turn?token=secret-token", SigningSecret: testSecret, TimeoutMS: timeoutMS,
		Headers: map[string]string{"Authorization": "Bearer abc"},
	}}, agent.Deps{HTTPClient: client, Policy: voiceops.URLPolicy{AllowLoopback: true}})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return a
}

func answer(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, body)
	}
}

var testConversation = voiceops.Conversation{
	ID: "conv_1", AccountID: "acct_1", ProjectID: "proj_1", Channel: voiceops.ChannelWebchat, VariantID: "own",
	ASRLang: "en-GB", State: map[string]any{"step": 1, "name": "Ada"},
	IntegrationAttributes: map[string]any{"crm_id": "42"},
}

func TestHTTPAgent(t *testing.T) {
	e := newEndpoint(t, answer(`{"response": "Hi Ada <3", "state": {"step": 2}, "intents": ["greet"],
	  "entities": [{"type": "name", "value": "Ada"}], "ood": true, "end": false,
	  "handoff": {"reason": "vip", "sip": {"outbound_caller_id": "+15550100", "outbound_endpoint": "pbx-1"}}}`))
	a := e.agent(t, 0, e.client(true))
	got, err := a.Respond(t.Context(), agent.Request{
		Conversation: testConversation,
		Turn:         voiceops.Turn{UserInput: "hello", UserInputDTMF: "1#", Metadata: map[string]any{"page": "/pricing"}},
	})
	if err != nil {
		t.Fatalf("Respond: %v", err)
	}
	want := agent.Reply{
		Response: "Hi Ada <3", State: map[string]any{"step": float64(2)}, Intents: []string{"greet"},
		Entities: []map[string]any{{"type": "name", "value": "Ada"}}, OOD: true,
		Handoff: &agent.Handoff{Destination: "pbx-1", Reason: "vip", SIP: &agent.SIPHandoff{OutboundCallerID: "+15550100", OutboundEndpoint: "pbx-1"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("reply:\n got %s\nwant %s", show(got), show(want))
	}

	reqs := e.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	r := reqs[0]
	if r.method != http.MethodPost || r.path != "/turn" || r.query != "token=secret-token" {
		t.Errorf("request line: %s %s?%s", r.method, r.path, r.query)
	}
	for name, want := range map[string]string{
		"Content-Type": "application/json", "User-Agent": agent.DefaultUserAgent, "Authorization": "Bearer abc",
	} {
		if got := r.header.Get(name); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	if id := r.header.Get("webhook-id"); !strings.HasPrefix(id, "msg_") {
		t.Errorf("webhook-id %q", id)
	}
	if r.header.Get("X-Service-Signature") != "" {
		t.Errorf("the compatibility signature is for webhook deliveries only")
	}
	// The signature verifies with the official library, and only over the
	// exact body.
	wh, err := standardwebhooks.NewWebhook(testSecret)
	if err != nil {
		t.Fatal(err)
	}
	if err := wh.Verify(r.body, r.header); err != nil {
		t.Errorf("signature does not verify: %v", err)
	}
	if err := wh.Verify(append(r.body, ' '), r.header); err == nil {
		t.Errorf("signature verifies another body")
	}
	var body map[string]any
	if err := json.Unmarshal(r.body, &body); err != nil {
		t.Fatal(err)
	}
	wantBody := map[string]any{
		"conversation": map[string]any{
			"id": "conv_1", "state": map[string]any{"step": float64(1), "name": "Ada"},
			"integration_attributes": map[string]any{"crm_id": "42"}, "variant_id": "own", "channel": "webchat",
			"asr_lang_code": "en-GB",
		},
		"turn":  map[string]any{"user_input": "hello", "user_input_dtmf": "1#", "is_silence": false, "metadata": map[string]any{"page": "/pricing"}},
		"start": false,
	}
	if !reflect.DeepEqual(body, wantBody) {
		t.Errorf("body:\n got %s\nwant %v", r.body, wantBody)
	}
}

// TestHTTPAgentStart: the greeting request has no turn input, an empty
// state object and a null integration_attributes when there are none.
func TestHTTPAgentStart(t *testing.T) {
	e := newEndpoint(t, answer(`{"response": "Welcome"}`))
	a := e.agent(t, 0, e.client(true))
	got, err := a.Respond(t.Context(), agent.Request{Start: true, Conversation: voiceops.Conversation{ID: "c", Channel: voiceops.ChannelVoice},
		Turn: voiceops.Turn{UserInput: "ignored"}})
	if err != nil || !reflect.DeepEqual(got, agent.Reply{Response: "Welcome"}) {
		t.Fatalf("Respond: %s, %v", show(got), err)
	}
	want := `{"conversation":{"id":"c","state":{},"integration_attributes":null,"variant_id":"","channel":"voice"},` +
		`"turn":{"user_input":"","user_input_dtmf":"","is_silence":false,"metadata":{}},"start":true}`
	if got := string(e.requests()[0].body); got != want {
		t.Errorf("body:\n got %s\nwant %s", got, want)
	}
}

func TestHTTPAgentErrors(t *testing.T) {
	big := `{"response": "` + strings.Repeat("a", agent.MaxReplyBytes) + `"}`
	tests := []struct {
		name    string
		handler http.HandlerFunc
		want    error
		detail  string
	}{
		{"500", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "boom", http.StatusInternalServerError) }, agent.ErrStatus, "HTTP 500"},
		{"404", func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) }, agent.ErrStatus, "HTTP 404"},
		{"redirect is not followed", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "https://example.com/", http.StatusFound)
		}, agent.ErrStatus, "HTTP 302"},
		{"not JSON", answer(`<html>oops</html>`), agent.ErrBadReply, "invalid JSON"},
		{"empty body", answer(``), agent.ErrBadReply, "invalid JSON"},
		{"null", answer(`null`), agent.ErrBadReply, "must be an object"},
		{"array", answer(`[{"response": "x"}]`), agent.ErrBadReply, "must be an object"},
		{"response missing", answer(`{"end": true}`), agent.ErrBadReply, "response: is required"},
		{"response not a string", answer(`{"response": 5}`), agent.ErrBadReply, "response: must be a string"},
		{"response empty", answer(`{"response": ""}`), agent.ErrBadReply, "response: must not be empty"},
		{"unknown field", answer(`{"response": "x", "is_ood": true}`), agent.ErrBadReply, "is_ood: unknown field"},
		{"trailing data", answer(`{"response": "x"} {"response": "y"}`), agent.ErrBadReply, "after the JSON object"},
		{"duplicate key", answer(`{"response": "x", "response": "y"}`), agent.ErrBadReply, "more than once"},
		{"bad intents", answer(`{"response": "x", "intents": [1]}`), agent.ErrBadReply, "intents[0]: must be a string"},
		{"bad entity", answer(`{"response": "x", "entities": ["a"]}`), agent.ErrBadReply, "entities[0]: must be an object"},
		{"bad state", answer(`{"response": "x", "state": []}`), agent.ErrBadReply, "state: must be an object"},
		{"handoff without destination", answer(`{"response": "x", "handoff": {"reason": "r"}}`), agent.ErrBadReply, "handoff.destination"},
		{"too large", answer(big), agent.ErrBadReply, "larger than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEndpoint(t, tt.handler)
			_, err := e.agent(t, 0, e.client(true)).Respond(t.Context(), agent.Request{Conversation: testConversation, Turn: voiceops.Turn{UserInput: "hi"}})
			if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.detail) {
				t.Fatalf("got %v, want %v with %q", err, tt.want, tt.detail)
			}
			if strings.Contains(err.Error(), "secret-token") || strings.Contains(err.Error(), "127.0.0.1") {
				t.Errorf("the error shows the URL: %v", err)
			}
		})
	}
}

// TestHTTPAgentEmptyResponse: an empty response is accepted with an end or
// a handoff (there is nothing more to say).
func TestHTTPAgentEmptyResponse(t *testing.T) {
	for _, body := range []string{`{"response": "", "end": true}`, `{"response": "", "handoff": {"destination": "q"}}`} {
		e := newEndpoint(t, answer(body))
		if _, err := e.agent(t, 0, e.client(true)).Respond(t.Context(), agent.Request{}); err != nil {
			t.Errorf("%s: %v", body, err)
		}
	}
}

func TestHTTPAgentTimeout(t *testing.T) {
	for name, h := range map[string]http.HandlerFunc{
		"no answer": func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
		},
		"slow body": func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.WriteString(w, `{"response": `)
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			e := newEndpoint(t, h)
			a := e.agent(t, agent.MinTimeoutMS, e.client(true))
			start := time.Now()
			_, err := a.Respond(t.Context(), agent.Request{Turn: voiceops.Turn{UserInput: "hi"}})
			if !errors.Is(err, agent.ErrTimeout) {
				t.Fatalf("got %v, want ErrTimeout", err)
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("took %v with a 100ms timeout", d)
			}
		})
	}
}

// TestHTTPAgentCanceled: the caller's cancellation is not the endpoint's
// timeout.
func TestHTTPAgentCanceled(t *testing.T) {
	e := newEndpoint(t, func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(50*time.Millisecond, cancel)
	_, err := e.agent(t, agent.MaxTimeoutMS, e.client(true)).Respond(ctx, agent.Request{})
	if !errors.Is(err, context.Canceled) || errors.Is(err, agent.ErrTimeout) {
		t.Errorf("got %v", err)
	}
}

// TestHTTPAgentGuard: the client refuses loopback at dial time unless the
// dev server allows it, and an untrusted certificate is refused.
func TestHTTPAgentGuard(t *testing.T) {
	e := newEndpoint(t, answer(`{"response": "x"}`))
	_, err := e.agent(t, 0, e.client(false)).Respond(t.Context(), agent.Request{})
	if !errors.Is(err, agent.ErrUnreachable) || !strings.Contains(err.Error(), "non-public") {
		t.Errorf("loopback without AllowLoopback: %v", err)
	}
	_, err = e.agent(t, 0, webhook.NewClient(webhook.Options{AllowLoopback: true})).Respond(t.Context(), agent.Request{})
	if !errors.Is(err, agent.ErrUnreachable) || !strings.Contains(err.Error(), "TLS certificate") {
		t.Errorf("untrusted certificate: %v", err)
	}
	if n := len(e.requests()); n != 0 {
		t.Errorf("%d requests reached the endpoint", n)
	}
	a := e.agent(t, 0, e.client(true))
	e.srv.Close()
	if _, err := a.Respond(t.Context(), agent.Request{}); !errors.Is(err, agent.ErrUnreachable) {
		t.Errorf("closed endpoint: %v", err)
	}
}

// TestHTTPAgentConcurrent: one agent serves many conversations at once.
func TestHTTPAgentConcurrent(t *testing.T) {
	e := newEndpoint(t, answer(`{"response": "ok"}`))
	a := e.agent(t, 0, e.client(true))
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			c := testConversation
			c.ID = fmt.Sprintf("conv_%d", i)
			if r, err := a.Respond(t.Context(), agent.Request{Conversation: c}); err != nil || r.Response != "ok" {
				t.Errorf("Respond: %v %v", r, err)
			}
		})
	}
	wg.Wait()
	ids := map[string]bool{}
	for _, r := range e.requests() {
		ids[r.header.Get("webhook-id")] = true
	}
	if len(ids) != 20 {
		t.Errorf("%d distinct webhook-ids for 20 requests", len(ids))
	}
}
