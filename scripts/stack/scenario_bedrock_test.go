//go:build stack

package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"net/http/httptest"
	"net/url"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/voiceops/opsapi/scripts/stack/awsproxy"
	"github.com/voiceops/opsapi/scripts/stack/iam"
	"github.com/voiceops/opsapi/shared/calls/callstest/twiliofake"
	"github.com/voiceops/opsapi/shared/conversations/agent"
	"github.com/voiceops/opsapi/shared/conversations/agent/bedrockstandin"
	"github.com/voiceops/opsapi/shared/ops/provision"
	"github.com/voiceops/opsapi/shared/platform/lambdamain"
	"github.com/voiceops/opsapi/shared/store/dynamo"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// bedrockModel is the one model the scenarios' stack may call: TestMain
// synthesizes the stack with -context bedrockModels=bedrockModel (the
// model of docs/examples/bedrock-agent.json).
const bedrockModel = "anthropic.claude-3-haiku-20240307-v1:0"

// deniedModel is a model the stack's policies do not name.
const deniedModel = "amazon.titan-text-lite-v1"

// bedrockFunctions are the functions that answer turns, the only ones
// granted bedrock:InvokeModel.
var bedrockFunctions = []string{"calls", "chat"}

// bedrockProject is a project of its own (no other scenario lists its
// conversations), created as the operator does (opsctl project create,
// key create), with the keys chat, lists and outbound calls need.
type bedrockProject struct {
	account, project                string
	apiKey, agentToken, serviceAuth string
}

func newBedrockProject(t *testing.T, accountID, projectID string) bedrockProject {
	t.Helper()
	ctx := context.Background()
	db := dynamodb.NewFromConfig(st.AWS)
	p := provision.Provisioner{Accounts: dynamo.NewStores(db, st.Topology.TableNames()).Accounts,
		Region: voiceops.Region(st.Credentials.Region), Now: time.Now}
	if _, err := p.CreateProject(ctx, accountID, projectID, "Bedrock scenario"); err != nil {
		t.Fatalf("creating project %s: %v", projectID, err)
	}
	bp := bedrockProject{account: accountID, project: projectID}
	for _, k := range []struct {
		kind voiceops.KeyKind
		dst  *string
	}{{voiceops.KeyAPI, &bp.apiKey}, {voiceops.KeyAgent, &bp.agentToken}, {voiceops.KeyService, &bp.serviceAuth}} {
		secret, _, err := p.CreateKey(ctx, k.kind, accountID, projectID)
		if err != nil {
			t.Fatal(err)
		}
		*k.dst = secret
	}
	return bp
}

// loadBedrockAgent loads docs/examples/bedrock-agent.json, the file the
// docs load with opsctl agent load, with modelID and the tool
// lookup_order served by fnURL; through the parse and store opsctl uses
// (with loopback URLs allowed, as the stack runs with
// -allow-loopback-webhooks).
func loadBedrockAgent(t *testing.T, bp bedrockProject, modelID, fnURL, fnSecret string) {
	t.Helper()
	b, err := os.ReadFile("../../docs/examples/bedrock-agent.json")
	if err != nil {
		t.Fatal(err)
	}
	var cfg agent.Config
	if err := json.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	cfg.AccountID, cfg.ProjectID = bp.account, bp.project
	spec := cfg.Variants[0].Agent.Bedrock
	spec.ModelID = modelID
	spec.Tools = []string{"lookup_order"}
	cfg.Tools = map[string]agent.ToolSpec{"lookup_order": {Description: "Finds an order by its number.",
		InputSchema: map[string]any{"type": "object", "properties": map[string]any{"order": map[string]any{"type": "string", "maxLength": 20}},
			"required": []any{"order"}, "additionalProperties": false},
		Function: agent.FunctionSpec{URL: fnURL, SigningSecret: fnSecret, TimeoutMS: 3000}}}
	parsed, err := agent.ParseConfig(mustJSON(t, cfg), voiceops.URLPolicy{AllowLoopback: true})
	if err != nil {
		t.Fatalf("the Bedrock agent's configuration: %v", err)
	}
	db := dynamodb.NewFromConfig(st.AWS)
	if err := agent.PutConfig(context.Background(), dynamo.NewConfig(db, st.Topology.TableNames().Config, st.Topology.TableNames().Deliveries).AgentConfigs(), parsed); err != nil {
		t.Fatal(err)
	}
}

// wantModel is a turn's model metadata as the list shows it.
type wantModel struct {
	ModelID        string         `json:"model_id"`
	InputTokens    int            `json:"input_tokens"`
	OutputTokens   int            `json:"output_tokens"`
	StopReason     string         `json:"stop_reason"`
	ModelLatencyMS int64          `json:"model_latency_ms"`
	ToolCalls      []wantToolCall `json:"tool_calls"`
	Guardrail      string         `json:"guardrail_action"`
}

type wantToolCall struct {
	Name       string `json:"name"`
	Outcome    string `json:"outcome"`
	DurationMS int64  `json:"duration_ms"`
}

// modelOf is the metadata the scripted steps of one turn add up to.
func modelOf(steps []bedrockstandin.Step, tools ...string) wantModel {
	m := wantModel{ModelID: bedrockModel, StopReason: "end_turn", Guardrail: "none", ToolCalls: []wantToolCall{}}
	for _, s := range steps {
		m.InputTokens += s.InputTokens
		m.OutputTokens += s.OutputTokens
		m.ModelLatencyMS += int64(s.LatencyMS)
	}
	for _, name := range tools {
		m.ToolCalls = append(m.ToolCalls, wantToolCall{Name: name, Outcome: "ok"})
	}
	return m
}

func say(text string, in, out, latencyMS int) bedrockstandin.Step {
	return bedrockstandin.Step{Text: text, InputTokens: in, OutputTokens: out, LatencyMS: latencyMS}
}

func useTool(name string, input map[string]any, in, out, latencyMS int) bedrockstandin.Step {
	return bedrockstandin.Step{ToolUses: []bedrockstandin.ToolUse{{Name: name, Input: input}}, InputTokens: in, OutputTokens: out, LatencyMS: latencyMS}
}

// bedrockScenario is a project of its own whose agent is
// docs/examples/bedrock-agent.json on the scenarios' model, with its tool
// lookup_order served by a loopback receiver.
type bedrockScenario struct {
	bedrockProject
	fn              *functionReceiver
	fnURL, fnSecret string
	requestsBefore  int
}

func newBedrockScenario(t *testing.T, projectID, modelID string) *bedrockScenario {
	t.Helper()
	if n := st.Bedrock.Pending(); n != 0 {
		t.Fatalf("the stand-in holds %d scripted answers before the scenario", n)
	}
	secret := make([]byte, 32)
	_, _ = rand.Read(secret)
	sc := &bedrockScenario{bedrockProject: newBedrockProject(t, st.Credentials.Accounts[1].AccountID, projectID),
		fnSecret: "whsec_" + base64.StdEncoding.EncodeToString(secret)}
	wh, err := standardwebhooks.NewWebhook(sc.fnSecret)
	if err != nil {
		t.Fatal(err)
	}
	sc.fn = &functionReceiver{wh: wh, delay: 60 * time.Millisecond, answer: func(c functionCall) any {
		order := c.argument("order")
		return map[string]any{"response": "order " + order + " ships today", "state": map[string]any{"order_status": "shipped", "order": order}}
	}}
	srv := httptest.NewServer(sc.fn)
	t.Cleanup(srv.Close)
	sc.fnURL = srv.URL + "/tool"
	loadBedrockAgent(t, sc.bedrockProject, modelID, sc.fnURL, sc.fnSecret)
	sc.requestsBefore = len(st.Bedrock.Requests())
	return sc
}

// requests are the Converse requests the stand-in got since the scenario
// began.
func (sc *bedrockScenario) requests() []bedrockstandin.Request {
	return st.Bedrock.Requests()[sc.requestsBefore:]
}

// A chat with a project whose agent is a Bedrock model, on the stack,
// against the runner's Bedrock stand-in (scripted): a greeting and a plain
// reply, a turn whose model calls the project's tool function and answers
// from its result, and a handoff by the model's handoff tool, which hands
// the conversation off as a scripted rule does (the answer's handoff, the
// handoff state, END_REASON). The v3 list with include_turn_metadata
// shows each agent turn's model metadata as scripted. The chat function
// reaches the stand-in through AWS_ENDPOINT_URL_BEDROCK_RUNTIME (the
// proxy's general endpoint refuses Converse), each call checked against
// its template policy.
func TestBedrockChatOnTheStack(t *testing.T) {
	sc := newBedrockScenario(t, "proj_bedrock_chat", bedrockModel)
	h := map[string]string{"X-API-KEY": sc.apiKey, "X-TOKEN": sc.agentToken}
	chat := st.Credentials.BaseURL + "/v1/" + sc.account + "/" + sc.project + "/chat/"
	greeting := []bedrockstandin.Step{say("Hello, Acme orders here.", 120, 9, 310)}
	plain := []bedrockstandin.Step{say("I can look up any order.", 140, 11, 280)}
	lookup := []bedrockstandin.Step{useTool("lookup_order", map[string]any{"order": "A-1"}, 180, 21, 410), say("Order A-1 ships today.", 230, 8, 190)}
	handoff := []bedrockstandin.Step{useTool("handoff", map[string]any{"reason": "wants a person"}, 260, 15, 350), say("Transferring you now.", 300, 6, 120)}
	for _, steps := range [][]bedrockstandin.Step{greeting, plain, lookup, handoff} {
		st.Bedrock.Script(steps...)
	}
	type answer struct {
		ConversationID  string `json:"conversation_id"`
		Response        string `json:"response"`
		EndConversation bool   `json:"end_conversation"`
		Handoff         *struct {
			Destination, Reason string
			SharedID            string `json:"shared_id"`
		} `json:"handoff"`
	}
	var a answer
	if code, _, b := call(t, "POST", chat+"create", h, map[string]any{}, &a); code != 200 || a.Response != "Hello, Acme orders here." {
		t.Fatalf("chat create: %d %s", code, b)
	}
	chatID := a.ConversationID
	for _, turn := range []struct{ say, want string }{{"what can you do?", "I can look up any order."}, {"where is order A-1?", "Order A-1 ships today."}} {
		a = answer{}
		if code, _, b := call(t, "POST", chat+"respond", h, map[string]any{"conversation_id": chatID, "message": turn.say}, &a); code != 200 || a.Response != turn.want || a.EndConversation {
			t.Fatalf("chat respond %q: %d %s, want %q", turn.say, code, b, turn.want)
		}
	}
	a = answer{}
	if code, _, b := call(t, "POST", chat+"respond", h, map[string]any{"conversation_id": chatID, "message": "a person please"}, &a); code != 200 ||
		a.Response != "Transferring you now." || !a.EndConversation || a.Handoff == nil ||
		a.Handoff.Destination != "support-queue" || a.Handoff.Reason != "wants a person" || a.Handoff.SharedID == "" {
		t.Fatalf("chat respond (handoff): %d %s", code, b)
	}
	// The handoff state is the conversation's state at the handoff: what
	// the tool function set.
	var hs struct {
		ID       string         `json:"id"`
		SharedID string         `json:"shared_id"`
		Data     map[string]any `json:"data"`
	}
	hsURL := st.Credentials.BaseURL + "/v1/" + sc.account + "/" + sc.project + "/handoff_state?id=" + chatID
	if code, _, b := call(t, "GET", hsURL, map[string]string{"x-api-key": sc.apiKey}, nil, &hs); code != 200 || hs.SharedID != a.Handoff.SharedID ||
		hs.ID != chatID || !reflect.DeepEqual(hs.Data, map[string]any{"order_status": "shipped", "order": "A-1"}) {
		t.Errorf("handoff state: %d %s", code, b)
	}
	// Every call on the configured model, offering the variant's tools;
	// the tool's result went back to the model in the round after its call.
	reqs := sc.requests()
	if len(reqs) != 6 {
		t.Fatalf("the stand-in got %d Converse requests for the chat, want 6", len(reqs))
	}
	for i, r := range reqs {
		if r.ModelID != bedrockModel || r.Region != "us-east-1" || !reflect.DeepEqual(r.ToolNames(), []string{"lookup_order", "handoff"}) {
			t.Errorf("request %d: model %s in %s, tools %v", i, r.ModelID, r.Region, r.ToolNames())
		}
	}
	if res := toolResultOf(reqs[3]); res == nil || res["content"] == nil || res["status"] != "success" {
		t.Errorf("the round after the tool call carries %v, want the tool's result", res)
	} else if c := res["content"].([]any)[0].(map[string]any)["json"].(map[string]any); c["response"] != "order A-1 ships today" {
		t.Errorf("the tool result sent to the model: %v", c)
	}
	calls := sc.fn.taken()
	if len(calls) != 1 || calls[0].Hook != "tool" || calls[0].Extra["tool"] != "lookup_order" || calls[0].argument("order") != "A-1" ||
		calls[0].Conv.ID != chatID || calls[0].verified != nil {
		t.Fatalf("the tool function's calls: %+v", calls)
	}
	list := sc.checkTurnModels(t, [][]wantModel{{modelOf(greeting), modelOf(plain), modelOf(lookup, "lookup_order"), modelOf(handoff, "handoff")}})
	if c := list[0]; c.ID != chatID || c.InProgress || c.Metrics["END_REASON"] != "handoff" {
		t.Errorf("the chat in the list: %s in progress %v, END_REASON %v; want %s ended by its handoff", c.ID, c.InProgress, c.Metrics["END_REASON"], chatID)
	}
}

// An outbound call with a project whose agent is a Bedrock model, played
// through the Twilio stand-in's signed callbacks to the calls function:
// the model's greeting, then a turn whose model calls the project's tool
// function; the caller hears both answers, and the v3 list with
// include_turn_metadata shows each agent turn's model metadata as
// scripted.
func TestBedrockVoiceOnTheStack(t *testing.T) {
	sc := newBedrockScenario(t, "proj_bedrock_voice", bedrockModel)
	greeting := []bedrockstandin.Step{say("Acme orders, how can I help?", 110, 10, 260)}
	lookup := []bedrockstandin.Step{useTool("lookup_order", map[string]any{"order": "B-2"}, 170, 19, 380), say("Order B-2 ships today.", 210, 9, 170)}
	st.Bedrock.Script(append(greeting, lookup...)...)
	heard := playBedrockCall(t, sc.bedrockProject, "where is order B-2?")
	if !containsAll(heard, "Acme orders, how can I help?", "Order B-2 ships today.") {
		t.Errorf("the caller heard %q, want the greeting and the tool turn's answer", heard)
	}
	if n := st.Bedrock.Pending(); n != 0 {
		t.Errorf("%d scripted answers were not asked for", n)
	}
	if reqs := sc.requests(); len(reqs) != 3 || reqs[0].ModelID != bedrockModel {
		t.Errorf("the stand-in got %d Converse requests for the call, want 3 on %s", len(reqs), bedrockModel)
	}
	calls := sc.fn.taken()
	if len(calls) != 1 || calls[0].Extra["tool"] != "lookup_order" || calls[0].argument("order") != "B-2" || calls[0].Conv.Channel != string(voiceops.ChannelVoice) || calls[0].verified != nil {
		t.Errorf("the tool function's calls: %+v", calls)
	}
	list := sc.checkTurnModels(t, [][]wantModel{{modelOf(greeting), modelOf(lookup, "lookup_order")}})
	if list[0].InProgress {
		t.Errorf("the call's conversation %s is still in progress", list[0].ID)
	}
}

// listedConversation is a conversation of the v3 list with its turns'
// model metadata.
type listedConversation struct {
	ID         string         `json:"id"`
	InProgress bool           `json:"in_progress"`
	Metrics    map[string]any `json:"metrics"`
	Turns      []struct {
		AgentResponse string     `json:"agent_response"`
		Model         *wantModel `json:"model"`
	} `json:"turns"`
}

// checkTurnModels reads the project's v3 list with include_turn_metadata
// (the base host) and compares each conversation's turns' model metadata
// with wants (conversations in order of start). A tool call's duration is
// measured, not scripted: at least the tool function's own time.
func (sc *bedrockScenario) checkTurnModels(t *testing.T, wants [][]wantModel) []listedConversation {
	t.Helper()
	var list struct{ Conversations []listedConversation }
	u := st.Credentials.BaseURL + "/v3/" + sc.account + "/" + sc.project + "/conversations?limit=10&include_turn_metadata=true"
	if code, _, b := call(t, "GET", u, map[string]string{"x-api-key": sc.apiKey}, nil, &list); code != 200 || len(list.Conversations) != len(wants) {
		t.Fatalf("v3 list: %d %s, want %d conversations", code, b, len(wants))
	}
	for k, c := range list.Conversations {
		if len(c.Turns) != len(wants[k]) {
			t.Errorf("conversation %s: %d turns, want %d", c.ID, len(c.Turns), len(wants[k]))
			continue
		}
		for i, turn := range c.Turns {
			got := turn.Model
			if got == nil {
				t.Errorf("conversation %s turn %d (%q) has no model metadata", c.ID, i, turn.AgentResponse)
				continue
			}
			for j := range got.ToolCalls {
				if d := got.ToolCalls[j].DurationMS; got.ToolCalls[j].Name == "lookup_order" && (d < sc.fn.delay.Milliseconds() || d > 8000) {
					t.Errorf("conversation %s turn %d: lookup_order took %d ms, want at least %v", c.ID, i, d, sc.fn.delay)
				}
				got.ToolCalls[j].DurationMS = 0
			}
			if !reflect.DeepEqual(*got, wants[k][i]) {
				t.Errorf("conversation %s turn %d model metadata\n got %+v\nwant %+v", c.ID, i, *got, wants[k][i])
			}
		}
	}
	return list.Conversations
}

// The stack is synthesized with -context bedrockModels=bedrockModel: the
// template grants bedrock:InvokeModel on that model to chat and calls
// only, and a project whose agent names another model gets the fallback,
// its Converse refused by the runner's IAM check (AccessDeniedException,
// as deployed) and never reaching the stand-in.
func TestBedrockModelOutsideTheContextIsRefused(t *testing.T) {
	checkBedrockPolicies(t)
	sc := newBedrockScenario(t, "proj_bedrock_denied", deniedModel)
	h := map[string]string{"X-API-KEY": sc.apiKey, "X-TOKEN": sc.agentToken}
	var a struct{ Response string }
	if code, _, b := call(t, "POST", st.Credentials.BaseURL+"/v1/"+sc.account+"/"+sc.project+"/chat/create", h, map[string]any{}, &a); code != 200 ||
		a.Response != "Sorry, one moment please." {
		t.Errorf("chat on a model outside bedrockModels: %d %s, want the fallback", code, b)
	}
	if n := len(sc.requests()); n != 0 {
		t.Errorf("the stand-in got %d requests for a refused model", n)
	}
	// Taken out of the run's record, which TestZZNoAccessDenied holds empty:
	// this refusal is the one meant.
	refused := st.Proxy.TakeDenials(func(d awsproxy.Denial) bool {
		return d.Request.Action == "bedrock:InvokeModel" && d.Request.Resource == st.Proxy.ARNs.FoundationModel(deniedModel)
	})
	if len(refused) != 1 || refused[0].Function != "chat" {
		t.Errorf("refused Converse calls on %s: %v, want one of chat", deniedModel, refused)
	}
	var list struct {
		Conversations []listedConversation
	}
	u := st.Credentials.BaseURL + "/v3/" + sc.account + "/" + sc.project + "/conversations?include_turn_metadata=true"
	if code, _, b := call(t, "GET", u, map[string]string{"x-api-key": sc.apiKey}, nil, &list); code != 200 || len(list.Conversations) != 1 ||
		len(list.Conversations[0].Turns) != 1 || list.Conversations[0].Turns[0].Model == nil || list.Conversations[0].Turns[0].Model.StopReason != "error" {
		t.Errorf("the refused turn in the list: %d %s, want its model's stop_reason error", code, b)
	}
}

// checkBedrockPolicies: the template grants bedrock:InvokeModel on the
// configured model, to the functions that answer turns only, and on no
// other model.
func checkBedrockPolicies(t *testing.T) {
	t.Helper()
	allowed := iam.Request{Action: "bedrock:InvokeModel", Resource: st.Proxy.ARNs.FoundationModel(bedrockModel)}
	other := iam.Request{Action: "bedrock:InvokeModel", Resource: st.Proxy.ARNs.FoundationModel(deniedModel)}
	var granted []string
	for _, p := range st.Proxy.Principals {
		if p.Policy.Evaluate(allowed).Allowed {
			granted = append(granted, p.Function)
		}
		if p.Policy.Evaluate(other).Allowed {
			t.Errorf("%s may call %s, a model the context does not name", p.Function, deniedModel)
		}
	}
	slices.Sort(granted)
	if !slices.Equal(granted, bedrockFunctions) {
		t.Fatalf("bedrock:InvokeModel on %s is granted to %v, want %v (is the assembly synthesized with -context bedrockModels=%s?)",
			bedrockModel, granted, bedrockFunctions, bedrockModel)
	}
}

// toolResultOf is the first toolResult block of a request's last message.
func toolResultOf(r bedrockstandin.Request) map[string]any {
	last := r.Messages[len(r.Messages)-1]
	for _, b := range last.Content {
		if res, ok := b["toolResult"].(map[string]any); ok {
			return res
		}
	}
	return nil
}

// playBedrockCall triggers an outbound call of the project and plays it
// as Twilio would, through the Twilio stand-in: ringing, the answer, one
// speech turn (following <Redirect>s, as for a slow turn), completed. It
// returns the TwiML of the answer and of the turn.
func playBedrockCall(t *testing.T, bp bedrockProject, speech string) []string {
	t.Helper()
	var secretID string
	for _, f := range st.Topology.Functions {
		if id := f.Env[lambdamain.TwilioSecretEnv]; id != "" {
			secretID = id
		}
	}
	// Every demo account, not only this project's: the dialer caches the
	// secret and reads it again for an unknown account only after 5 s, so
	// a scenario that sets its own account just after this one would be
	// refused.
	var accounts []string
	for _, a := range st.Credentials.Accounts {
		accounts = append(accounts, a.AccountID)
	}
	if !slices.Contains(accounts, bp.account) {
		t.Fatalf("the project's account %s is not a demo account", bp.account)
	}
	if err := setStandInAccounts(context.Background(), secretsmanager.NewFromConfig(st.AWS), secretID, accounts); err != nil {
		t.Fatal(err)
	}
	type played struct {
		bodies []string
		err    error
	}
	done := make(chan played, 1)
	api := &twiliofake.API{Placed: func(created url.Values) {
		var p played
		defer func() { // the first call's; a later one never holds the stand-in
			select {
			case done <- p:
			default:
			}
		}()
		post := func(u string, form url.Values) string {
			code, body, err := twiliofake.Post(u, form, twiliofake.Sign(twiliofake.AuthToken, u, form))
			if err == nil && code/100 != 2 {
				err = fmt.Errorf("%s answered %d: %s", u, code, body)
			}
			if err != nil && p.err == nil {
				p.err = err
			}
			return body
		}
		follow := func(body string) string {
			for i := 0; i < 10 && redirectURL.MatchString(body); i++ {
				time.Sleep(500 * time.Millisecond) // the filler being said
				body = post(html.UnescapeString(redirectURL.FindStringSubmatch(body)[1]), twiliofake.CallbackForm(created, "CallStatus", "in-progress"))
			}
			return body
		}
		status := created.Get("StatusCallback")
		post(status, twiliofake.CallbackForm(created, "CallStatus", "ringing"))
		body := follow(post(created.Get("Url"), twiliofake.CallbackForm(created, "CallStatus", "in-progress")))
		p.bodies = append(p.bodies, body)
		if m := gatherActionURL.FindStringSubmatch(body); m != nil {
			p.bodies = append(p.bodies, follow(post(html.UnescapeString(m[1]), twiliofake.CallbackForm(created, "SpeechResult", speech))))
		}
		post(status, twiliofake.CallbackForm(created, "CallStatus", "completed"))
	}}
	twilioStandIn.set(api.ServeHTTP)
	var trig struct{ CallSid string }
	if code, _, b := call(t, "POST", st.Credentials.BaseURL+"/v1/outbound-calling/trigger", map[string]string{"X-Service-Auth-Token": bp.serviceAuth},
		map[string]any{"to_number": "+14155550123"}, &trig); code/100 != 2 {
		t.Fatalf("trigger: %d %s", code, b)
	}
	select {
	case p := <-done:
		if p.err != nil {
			t.Fatalf("a callback of the call failed: %v", p.err)
		}
		return p.bodies
	case <-time.After(45 * time.Second):
		t.Fatal("the call was not placed and played within 45 s")
	}
	return nil
}

func containsAll(bodies []string, texts ...string) bool {
	all := ""
	for _, b := range bodies {
		all += html.UnescapeString(b)
	}
	for _, s := range texts {
		if !strings.Contains(all, s) {
			return false
		}
	}
	return true
}
