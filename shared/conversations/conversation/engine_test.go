package conversation

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/conversations/agent"
	"github.com/voiceops/opsapi/shared/conversations/hooks"
	"github.com/voiceops/opsapi/shared/metrics"
	"github.com/voiceops/opsapi/shared/metrics/buckets"
	"github.com/voiceops/opsapi/shared/store/memory"
	"github.com/voiceops/opsapi/shared/voiceops"
)

const fnSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

// fixture is an engine on the memory stores with the demo agent on
// acct/proj, and a project function server whose answer a test sets.
type fixture struct {
	t       *testing.T
	e       *Engine
	stores  voiceops.Stores
	configs voiceops.AgentConfigStore
	metrics *memory.Metrics
	now     time.Time

	mu      sync.Mutex
	fnReply func(w http.ResponseWriter, hook string)
	fnTurn  int // on_turn answers so far (TestStateLimit)
	fnCalls []string
	fnURL   string
	pool    *tls.Config
}

func newFixture(t *testing.T, functions map[agent.Hook]bool) *fixture {
	return newFixtureOn(t, functions, memoryBackend(t))
}

// backend is a set of stores the engine runs on.
type backend struct {
	name    string
	stores  voiceops.Stores
	configs voiceops.AgentConfigStore
}

func memoryBackend(*testing.T) backend {
	m := memory.New()
	return backend{"memory", m.Stores(), m.AgentConfigs()}
}

func newFixtureOn(t *testing.T, functions map[agent.Hook]bool, b backend) *fixture {
	f := &fixture{t: t, stores: b.stores, configs: b.configs, metrics: memory.NewMetrics(), now: time.Now().UTC().Truncate(time.Second)}
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var call struct{ Hook string }
		_ = json.NewDecoder(r.Body).Decode(&call)
		hook := call.Hook
		f.mu.Lock()
		f.fnCalls = append(f.fnCalls, hook)
		reply := f.fnReply
		f.mu.Unlock()
		if reply == nil {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		reply(w, hook)
	}))
	t.Cleanup(srv.Close)
	f.fnURL = srv.URL + "/fn"
	f.pool = &tls.Config{RootCAs: srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs}
	ctx := context.Background()
	stores := f.stores
	if err := stores.Accounts.CreateAccount(ctx, voiceops.Account{ID: "acct", CreatedAt: f.now}); err != nil {
		t.Fatal(err)
	}
	if err := stores.Accounts.CreateProject(ctx, voiceops.Project{ID: "proj", AccountID: "acct", CreatedAt: f.now}); err != nil {
		t.Fatal(err)
	}
	cfg := agent.DemoConfig("acct", "proj")
	cfg.Functions = map[agent.Hook]agent.FunctionSpec{}
	for h := range functions {
		cfg.Functions[h] = agent.FunctionSpec{URL: f.fnURL, SigningSecret: fnSecret, TimeoutMS: 300}
	}
	if err := agent.PutConfig(ctx, f.configs, cfg); err != nil {
		t.Fatal(err)
	}
	f.e = &Engine{
		Store: stores.Conversations, Configs: f.configs,
		Functions: hooks.NewRunner(hooks.Options{AllowLoopback: true, TLSConfig: f.pool}),
		Metrics:   &buckets.Recorder{Store: f.metrics},
		Now:       func() time.Time { return f.now },
		Log:       slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	return f
}

func (f *fixture) start() Answer {
	f.t.Helper()
	ans, err := f.e.Start(context.Background(), StartInput{AccountID: "acct", ProjectID: "proj", Channel: voiceops.ChannelVoice,
		FromNumber: "+441234567890", ToNumber: "+442000000000", ASRLang: "en-GB", TTSLang: "en-GB",
		IntegrationAttributes: map[string]any{"crm_id": "c-42"}})
	if err != nil {
		f.t.Fatal(err)
	}
	return ans
}

func (f *fixture) say(id string, in TurnInput) Answer {
	f.t.Helper()
	f.now = f.now.Add(2 * time.Second)
	ans, err := f.e.Respond(context.Background(), "acct", "proj", id, in)
	if err != nil {
		f.t.Fatal(err)
	}
	return ans
}

// counts sums the metric buckets of the project scope.
func (f *fixture) counts() buckets.Summary {
	f.t.Helper()
	bs, err := f.metrics.ReadBuckets(context.Background(), metrics.Scope{AccountID: "acct", ProjectID: "proj"}, f.now.Add(-time.Hour), f.now.Add(time.Minute))
	if err != nil {
		f.t.Fatal(err)
	}
	return buckets.Summarize(bs, f.now.Add(-time.Hour), f.now.Add(time.Minute))
}

func TestVoiceConversationEndToEnd(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) { testVoiceConversation(t, newFixtureOn(t, nil, b)) })
	}
}

func testVoiceConversation(t *testing.T, f *fixture) {
	ctx := context.Background()
	start := f.start()
	id := start.Conversation.ID
	if !voiceops.ValidConversationID(id) || start.Response == "" || start.End {
		t.Fatalf("start: %+v", start)
	}
	if a := f.say(id, TurnInput{Message: "what's my balance please"}); a.Response != "Your balance is 1,234.56 dollars. Anything else?" || a.End {
		t.Errorf("balance: %+v", a)
	}
	f.say(id, TurnInput{DTMF: "1"})
	f.say(id, TurnInput{Silence: true})
	if a := f.say(id, TurnInput{Message: "blah blah"}); !a.Turn.IsOOD {
		t.Errorf("fallback turn not out-of-domain: %+v", a.Turn)
	}
	end := f.say(id, TurnInput{Message: "ok bye"})
	if !end.End || end.Handoff != nil {
		t.Errorf("bye: %+v", end)
	}
	c, err := f.e.Store.GetConversation(ctx, "acct", "proj", id)
	if err != nil {
		t.Fatal(err)
	}
	if c.InProgress || c.EndReason != voiceops.EndCompleted || c.NumTurns != 6 || c.NumSilences != 1 || c.NumOOD != 1 ||
		c.Channel != voiceops.ChannelVoice || c.FromNumber != "+441234567890" || c.VariantID != "main" || c.VariantName != "Demo IVR" ||
		c.State["balance_told"] != true || c.Environment != voiceops.EnvLive || c.EndedAt == nil {
		t.Errorf("conversation %+v", c)
	}
	turns, err := f.e.Store.Turns(ctx, "acct", "proj", id)
	if err != nil || len(turns) != 6 {
		t.Fatalf("turns %d %v", len(turns), err)
	}
	if turns[1].UserInput != "what's my balance please" || turns[1].Intents[0] != "check_balance" || turns[2].UserInputDTMF != "1" ||
		!turns[3].IsSilence || turns[0].AgentResponse != start.Response {
		t.Errorf("turns %+v", turns)
	}
	// Ended: no more turns, no second close.
	if _, err := f.e.Respond(ctx, "acct", "proj", id, TurnInput{Message: "hello?"}); !errors.Is(err, ErrEnded) {
		t.Errorf("respond after the end: %v", err)
	}
	if _, err := f.e.Close(ctx, "acct", "proj", id, voiceops.EndCompleted); !errors.Is(err, ErrEnded) {
		t.Errorf("close after the end: %v", err)
	}
	// Metrics: one call, a latency per turn, activity.
	s := f.counts()
	if s.Counts.Of(metrics.CallVolume) != 1 || s.Latency == nil || s.Latency.GetCount() != 6 {
		t.Errorf("metrics: volume %d, latencies %v", s.Counts.Of(metrics.CallVolume), s.Latency)
	}
	// Another project's view does not find it.
	if _, err := f.e.Respond(ctx, "acct", "other", id, TurnInput{}); !errors.Is(err, ErrNoSuchConv) {
		t.Errorf("other project: %v", err)
	}
}

func TestHandoffByRule(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) { testHandoff(t, newFixtureOn(t, nil, b)) })
	}
}

func testHandoff(t *testing.T, f *fixture) {
	id := f.start().Conversation.ID
	a := f.say(id, TurnInput{Message: "I want a human"})
	if !a.End || a.Handoff == nil || a.Handoff.Destination != "support-queue" {
		t.Fatalf("handoff: %+v", a)
	}
	c, _ := f.e.Store.GetConversation(context.Background(), "acct", "proj", id)
	if !c.Handoff || c.HandoffDestination != "support-queue" || c.HandoffReason != "caller asked for a human" || c.EndReason != voiceops.EndHandoff || c.SharedID == "" {
		t.Errorf("conversation %+v", c)
	}
}

func TestCrashedCallsAreCounted(t *testing.T) {
	f := newFixture(t, nil)
	id := f.start().Conversation.ID
	if _, err := f.e.Close(context.Background(), "acct", "proj", id, voiceops.EndCrashed); err != nil {
		t.Fatal(err)
	}
	if s := f.counts(); s.Counts.Of(metrics.CallCrashes) != 1 {
		t.Errorf("call_crashes %d", s.Counts.Of(metrics.CallCrashes))
	}
}

func TestProjectFunctions(t *testing.T) {
	cases := []struct {
		name      string
		reply     func(w http.ResponseWriter, hook string)
		wantResp  string
		wantEnd   bool
		wantErrs  int64
		handoffTo string
	}{
		{"override and state", func(w http.ResponseWriter, hook string) {
			if hook == "on_turn" {
				_, _ = io.WriteString(w, `{"response":"From the function","state":{"vip":true}}`)
			}
		}, "From the function", false, 0, ""},
		{"custom SIP handoff", func(w http.ResponseWriter, hook string) {
			if hook == "on_turn" {
				_, _ = io.WriteString(w, `{"handoff":true,"outbound_caller_id":"+15550001","outbound_endpoint":"sip-trunk-a"}`)
			}
		}, "Your balance is 1,234.56 dollars. Anything else?", true, 0, "sip-trunk-a"},
		{"end", func(w http.ResponseWriter, hook string) {
			if hook == "on_turn" {
				_, _ = io.WriteString(w, `{"end":true}`)
			}
		}, "Your balance is 1,234.56 dollars. Anything else?", true, 0, ""},
		{"fails", func(w http.ResponseWriter, hook string) { w.WriteHeader(500) }, "Your balance is 1,234.56 dollars. Anything else?", false, 2, ""},
		{"garbage", func(w http.ResponseWriter, hook string) { _, _ = io.WriteString(w, `<html>`) }, "Your balance is 1,234.56 dollars. Anything else?", false, 2, ""},
		{"times out", func(w http.ResponseWriter, hook string) { time.Sleep(600 * time.Millisecond) }, "Your balance is 1,234.56 dollars. Anything else?", false, 2, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, map[agent.Hook]bool{agent.HookOnStart: true, agent.HookOnTurn: true})
			f.fnReply = c.reply
			id := f.start().Conversation.ID
			a := f.say(id, TurnInput{Message: "balance", Metadata: map[string]any{"page": "/billing"}})
			if a.Response != c.wantResp || a.End != c.wantEnd {
				t.Errorf("answer %q end %v, want %q %v", a.Response, a.End, c.wantResp, c.wantEnd)
			}
			if c.handoffTo != "" && (a.Handoff == nil || a.Handoff.Destination != c.handoffTo || a.Handoff.SIP == nil) {
				t.Errorf("handoff %+v", a.Handoff)
			}
			if got := f.counts().Counts.Of(metrics.FunctionErrors); got != c.wantErrs {
				t.Errorf("function_errors %d, want %d", got, c.wantErrs)
			}
			conv, _ := f.e.Store.GetConversation(context.Background(), "acct", "proj", id)
			if c.name == "override and state" && conv.State["vip"] != true {
				t.Errorf("state %v", conv.State)
			}
			f.mu.Lock()
			defer f.mu.Unlock()
			if len(f.fnCalls) != 2 || f.fnCalls[0] != "on_start" || f.fnCalls[1] != "on_turn" {
				t.Errorf("function calls %v", f.fnCalls)
			}
		})
	}
}

func TestUnknownVariantAndNoAgent(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	if _, err := f.e.Start(ctx, StartInput{AccountID: "acct", ProjectID: "proj", VariantID: "nope"}); !errors.Is(err, ErrNoVariant) {
		t.Errorf("unknown variant: %v", err)
	}
	ans, err := f.e.Start(ctx, StartInput{AccountID: "acct", ProjectID: "proj", VariantID: "express"})
	if err != nil || ans.Conversation.VariantName != "Express IVR" {
		t.Errorf("express variant: %+v %v", ans.Conversation, err)
	}
	if _, err := f.e.Start(ctx, StartInput{AccountID: "acct", ProjectID: "none"}); !errors.Is(err, ErrNoAgent) {
		t.Errorf("project without agent: %v", err)
	}
}

// TestFunctionsLogMetrics: the metrics of hook answers accumulate on the
// conversation, in order, up to the conversation's bound.
func TestFunctionsLogMetrics(t *testing.T) {
	f := newFixture(t, map[agent.Hook]bool{agent.HookOnStart: true, agent.HookOnTurn: true, agent.HookOnEnd: true})
	n := 0
	f.fnReply = func(w http.ResponseWriter, hook string) {
		n++
		_, _ = fmt.Fprintf(w, `{"metrics":{"HOOK":%q,"N":"%d"}}`, hook, n)
	}
	ctx := context.Background()
	id := f.start().Conversation.ID
	f.say(id, TurnInput{Message: "balance"})
	if _, err := f.e.Close(ctx, "acct", "proj", id, voiceops.EndClosed); err != nil {
		t.Fatal(err)
	}
	c, err := f.e.Store.GetConversation(ctx, "acct", "proj", id)
	if err != nil {
		t.Fatal(err)
	}
	want := []voiceops.CustomMetric{{Name: "HOOK", Value: "on_start"}, {Name: "N", Value: "1"}, {Name: "HOOK", Value: "on_turn"},
		{Name: "N", Value: "2"}, {Name: "HOOK", Value: "on_end"}, {Name: "N", Value: "3"}}
	if !slices.Equal(c.Metrics, want) {
		t.Errorf("metrics %v, want %v", c.Metrics, want)
	}

	// The bound: values past MaxCustomMetrics are dropped.
	f2 := newFixture(t, map[agent.Hook]bool{agent.HookOnTurn: true})
	f2.fnReply = func(w http.ResponseWriter, hook string) {
		_, _ = io.WriteString(w, `{"metrics":{"X":[`+strings.TrimSuffix(strings.Repeat(`"v",`, voiceops.MaxCustomMetricsPerAnswer), ",")+`]}}`)
	}
	id = f2.start().Conversation.ID
	for range voiceops.MaxCustomMetrics/voiceops.MaxCustomMetricsPerAnswer + 2 {
		f2.say(id, TurnInput{Message: "balance"})
	}
	c, _ = f2.e.Store.GetConversation(ctx, "acct", "proj", id)
	if len(c.Metrics) != voiceops.MaxCustomMetrics {
		t.Errorf("%d metrics kept, want the bound %d", len(c.Metrics), voiceops.MaxCustomMetrics)
	}
}

// TestStateLimit: a state that the functions grow past MaxStateBytes is
// not applied (the record would outgrow DynamoDB's item limit); the turn
// goes on, counts a function error, and the state keeps what it had.
func TestStateLimit(t *testing.T) {
	f := newFixture(t, map[agent.Hook]bool{agent.HookOnTurn: true})
	chunk := strings.Repeat("s", voiceops.MaxStateBytes*2/3)
	f.fnReply = func(w http.ResponseWriter, hook string) {
		f.fnTurn++
		_, _ = fmt.Fprintf(w, `{"state":{"k%d":%q}}`, f.fnTurn, chunk)
	}
	id := f.start().Conversation.ID
	f.say(id, TurnInput{Message: "hello"})
	if got := f.counts().Counts.Of(metrics.FunctionErrors); got != 0 {
		t.Fatalf("function_errors after a state under the limit: %d", got)
	}
	a := f.say(id, TurnInput{Message: "again"})
	if a.Response == "" || a.End {
		t.Errorf("the turn did not go on: %+v", a)
	}
	if got := f.counts().Counts.Of(metrics.FunctionErrors); got != 1 {
		t.Errorf("function_errors after a state over the limit: %d, want 1", got)
	}
	conv, err := f.e.Store.GetConversation(context.Background(), "acct", "proj", id)
	if err != nil || conv.State["k1"] != chunk || conv.State["k2"] != nil || conv.NumTurns != 3 {
		t.Errorf("conversation: turns %d, state keys %v, %v", conv.NumTurns, len(conv.State), err)
	}
}
