package conversationsapi

import (
	"github.com/voiceops/opsapi/shared/testsupport/spectest"

	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/voiceops/opsapi/shared/conversations/convlist"
	"github.com/voiceops/opsapi/shared/ops/provision"
	"github.com/voiceops/opsapi/shared/platform/auth"
	"github.com/voiceops/opsapi/shared/platform/httpapi"
	"github.com/voiceops/opsapi/shared/store/dynamo"
	"github.com/voiceops/opsapi/shared/testsupport/awstest"
	"github.com/voiceops/opsapi/shared/testsupport/samples"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// update rewrites the golden files under testdata/:
//
//	go test ./shared/conversations/conversationsapi -run TestConversationsGolden -update
var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// --- fixtures -----------------------------------------------------------------------

// convFixture is a conversation and its turns as a test stores them
// (samples.Conversation, with the short names the tests use).
type convFixture struct {
	c     voiceops.Conversation
	turns []voiceops.Turn
}

func fixtures(in []samples.Conversation) []convFixture {
	out := make([]convFixture, len(in))
	for i, f := range in {
		out[i] = convFixture{c: f.Conv, turns: f.Turns}
	}
	return out
}

func conversationAt(start time.Time) convFixture {
	return fixtures([]samples.Conversation{samples.ConversationAt(start)})[0]
}
func goldenFixtures() []convFixture { return fixtures(samples.GoldenConversations()) }
func benchConversations(n, turnsEach int) []convFixture {
	return fixtures(samples.BenchConversations(n, turnsEach))
}

// putConversation stores a conversation with its turns: CreateConversation
// with the first, AddTurn for each other (the stored record ends as c).
func putConversation(tb testing.TB, store voiceops.ConversationStore, f convFixture) {
	tb.Helper()
	ctx := context.Background()
	c := f.c
	c.Version = 1
	var first *voiceops.Turn
	if len(f.turns) > 0 {
		first = &f.turns[0]
	}
	if err := store.CreateConversation(ctx, c, first); err != nil {
		tb.Fatalf("CreateConversation %s: %v", c.ID, err)
	}
	for i := 1; i < len(f.turns); i++ {
		c.Version = int64(i) + 1
		if err := store.AddTurn(ctx, c, f.turns[i], int64(i)); err != nil {
			tb.Fatalf("AddTurn %s #%d: %v", c.ID, i, err)
		}
	}
}

// --- golden files -------------------------------------------------------------------

// TestConversationsGolden compares v3 (plain and with both include_*
// flags) and v1 listings of the same conversations with the golden files.
func TestConversationsGolden(t *testing.T) {
	h := newHarness(t)
	for _, f := range goldenFixtures() {
		putConversation(t, h.stores.Conversations, f)
	}
	for _, c := range []struct{ golden, path string }{
		{"conversations-v3.json", "/v3/acct_a/proj_a1/conversations?limit=10"},
		{"conversations-v3-include.json", "/v3/acct_a/proj_a1/conversations?limit=10&include_latency=true&include_turn_metadata=true"},
		{"conversations-v1.json", "/v1/acct_a/proj_a1/conversations?limit=10"},
		{"conversations-v3-sandbox.json", "/v3/acct_a/proj_a1/conversations?client_env=sandbox"},
	} {
		t.Run(c.golden, func(t *testing.T) {
			res := h.do("GET", c.path, h.keyA, nil).Expect(t, 200)
			if ct := res.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q", ct)
			}
			var pretty bytes.Buffer
			if err := json.Indent(&pretty, res.Body, "", "  "); err != nil {
				t.Fatalf("body is not JSON: %v\n%s", err, res.Body)
			}
			checkGolden(t, c.golden, pretty.Bytes())
		})
	}
}

func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (run with -update after checking the change):\ngot:\n%s", path, got)
	}
}

// TestConversationShapes checks the v1/v3 differences of the base host on decoded
// bodies, independently of the golden files.
func TestConversationShapes(t *testing.T) {
	h := newHarness(t)
	for _, f := range goldenFixtures() {
		putConversation(t, h.stores.Conversations, f)
	}
	list := func(path string) (map[string]any, []map[string]any) {
		t.Helper()
		body := h.do("GET", path, h.keyA, nil).Expect(t, 200).JSON(t)
		var out []map[string]any
		for _, c := range body["conversations"].([]any) {
			out = append(out, c.(map[string]any))
		}
		return body, out
	}
	body3, v3 := list("/v3/acct_a/proj_a1/conversations?limit=10")
	body1, v1 := list("/v1/acct_a/proj_a1/conversations?limit=10")
	if len(v3) != 3 || len(v1) != 3 {
		t.Fatalf("%d v3 and %d v1 conversations, want 3 live ones", len(v3), len(v1))
	}
	if _, ok := body3["next_offset"]; ok {
		t.Error("next_offset present on the last page")
	}
	if _, ok := body3["descriptions"]; ok {
		t.Error("v3 carries descriptions")
	}
	desc, _ := body1["descriptions"].(map[string]any)["conversations"].(map[string]any)
	for k := range v1[0] {
		if _, ok := desc[k]; !ok {
			t.Errorf("v1 descriptions.conversations has no %q", k)
		}
	}
	for i := 1; i < len(v3); i++ {
		if v3[i-1]["started_at"].(string) > v3[i]["started_at"].(string) {
			t.Errorf("not ascending by started_at: %v then %v", v3[i-1]["started_at"], v3[i]["started_at"])
		}
	}
	// Conversation 3 (in progress) has every optional text empty.
	live3, live1 := v3[2], v1[2]
	for _, k := range []string{"from_number", "to_number", "variant_name", "handoff_reason", "handoff_destination"} {
		if live3[k] != "" || live1[k] != nil {
			t.Errorf("%s: v3 %#v (want \"\"), v1 %#v (want null)", k, live3[k], live1[k])
		}
	}
	// Started 2026-11-21T09:50, the harness clock is 2026-11-22T10:00.
	if live3["total_duration"] != float64(24*3600+10*60) {
		t.Errorf("in-progress total_duration %v, want it to run to now", live3["total_duration"])
	}
	if m := live3["metrics"].(map[string]any); m["CALL_END"] != "" || m["END_REASON"] != "" || len(m["CALL_TURN"].([]any)) != 0 {
		t.Errorf("in-progress v3 metrics %v", m)
	}
	if m := live1["metrics"].(map[string]any); m["CALL_END"] != nil || m["END_REASON"] != nil {
		t.Errorf("in-progress v1 metrics %v", m)
	}
	if turns, ok := live3["turns"].([]any); !ok || len(turns) != 0 {
		t.Errorf("turns of a conversation without turns: %#v, want []", live3["turns"])
	}
	// Conversation 1: units and turn fields.
	call3, call1 := v3[0], v1[0]
	if call3["total_duration"] != float64(62) || call3["service_duration"] != float64(2) || call1["total_duration"] != float64(62) {
		t.Errorf("durations %v %v, want 62 (61.5 s rounded) and 2 (2.48 s)", call3["total_duration"], call3["service_duration"])
	}
	if m := call3["metrics"].(map[string]any); m["CALL_DURATION"] != "62" || len(m["CALL_TURN"].([]any)) != 4 || m["FUNCTION_ERRORS"] != "1" {
		t.Errorf("metrics %v", m)
	}
	turn3 := call3["turns"].([]any)[3].(map[string]any)
	turn1 := call1["turns"].([]any)[3].(map[string]any)
	if turn3["latency"] != 1.018 || turn3["translated_user_input"] != "" || turn3["english_agent_response"] != "" {
		t.Errorf("v3 turn %v", turn3)
	}
	for _, k := range []string{"latency", "translated_user_input", "english_agent_response", "metadata"} {
		if _, ok := turn1[k]; ok {
			t.Errorf("v1 turn has %s", k)
		}
	}
	if turn3["user_input_dtmf"] != "" || turn1["user_input_dtmf"] != nil {
		t.Errorf("empty dtmf: v3 %#v, v1 %#v", turn3["user_input_dtmf"], turn1["user_input_dtmf"])
	}
	if turn3["user_input_datetime"] != "2026-11-21T09:30:30.000Z" || turn1["user_input_datetime"] != "2026-11-21T09:30:30Z" {
		t.Errorf("times: v3 %v, v1 %v", turn3["user_input_datetime"], turn1["user_input_datetime"])
	}
	if _, ok := call3["latency"]; ok {
		t.Error("latency summary without include_latency")
	}
	_, inc := list("/v3/acct_a/proj_a1/conversations?limit=10&include_latency=true&include_turn_metadata=true")
	lat := inc[0]["latency"].(map[string]any)
	// Latencies 250, 412, 800, 1018 ms.
	if lat["turns"] != float64(4) || lat["avg_ms"] != float64(620) || lat["p50_ms"] != float64(412) || lat["p95_ms"] != float64(1018) || lat["max_ms"] != float64(1018) {
		t.Errorf("latency summary %v", lat)
	}
	if lat := inc[2]["latency"].(map[string]any); lat["turns"] != float64(0) || lat["p50_ms"] != nil {
		t.Errorf("latency summary without turns %v", lat)
	}
	md := inc[1]["turns"].([]any)[1].(map[string]any)["metadata"]
	if md.(map[string]any)["page"] != "/help" {
		t.Errorf("turn metadata %v", md)
	}
	if md := inc[1]["turns"].([]any)[0].(map[string]any)["metadata"]; md == nil {
		t.Error("a turn without metadata has no metadata object")
	}
}

// --- errors ---------------------------------------------------------------------------

func TestConversationsErrors(t *testing.T) {
	h := newHarness(t)
	list3, list1 := "/v3/acct_a/proj_a1/conversations", "/v1/acct_a/proj_a1/conversations"
	cases := []struct {
		name, path, key string
		status          int
		mention         string // the error_message names it
	}{
		{"no key", list3, "", 401, "API key"},
		{"bad key", list1, "vo_api_us_nope", 401, "API key"},
		{"agent token as key", list3, "agent", 401, "API key"},
		{"key of another account", list3, "keyB", 403, "account"},
		{"project key of another project", list3, "projKey2", 403, "project"},
		{"unknown account", "/v3/acct_zz/proj_a1/conversations", "keyA", 403, "account"},
		{"unknown project", "/v3/acct_a/proj_zz/conversations", "keyA", 404, "not found"},
		{"version v2", "/v2/acct_a/proj_a1/conversations", "keyA", 404, "no such route"},
		{"client_env", list3 + "?client_env=production", "keyA", 400, "client_env must be one of: sandbox, pre-release, live"},
		{"client_env empty", list3 + "?client_env=", "keyA", 400, "client_env"},
		{"start_time not RFC 3339", list3 + "?start_time=yesterday", "keyA", 400, "start_time must be an RFC 3339"},
		{"start_time without zone", list3 + "?start_time=2026-11-21T10:00:00", "keyA", 400, "start_time"},
		{"unencoded plus", list3 + "?start_time=2026-11-21T10:00:00+01:00", "keyA", 400, "%2B"},
		{"end_time", list1 + "?end_time=2026-13-01T00:00:00Z", "keyA", 400, "end_time"},
		{"start after end", list3 + "?start_time=2026-11-21T10:00:00Z&end_time=2026-11-21T09:00:00Z", "keyA", 400, "start_time must be before end_time"},
		{"start equals end", list3 + "?start_time=2026-11-21T10:00:00Z&end_time=2026-11-21T10:00:00.000Z", "keyA", 400, "start_time"},
		{"start in the future", list3 + "?start_time=2026-11-23T10:00:00Z", "keyA", 400, "defaults to now"},
		{"limit 0", list3 + "?limit=0", "keyA", 400, "limit must be an integer between 1 and 5000"},
		{"limit 5001", list3 + "?limit=5001", "keyA", 400, "limit"},
		{"limit not a number", list3 + "?limit=ten", "keyA", 400, "limit"},
		{"limit fraction", list3 + "?limit=1.5", "keyA", 400, "limit"},
		{"limit signed", list3 + "?limit=%2B5", "keyA", 400, "limit"},
		{"limit empty", list3 + "?limit=", "keyA", 400, "limit"},
		{"limit twice", list3 + "?limit=5&limit=6", "keyA", 400, "limit must be given once"},
		{"offset negative", list3 + "?offset=-1", "keyA", 400, "offset must be an integer"},
		{"offset huge", list3 + "?offset=99999999999999999999", "keyA", 400, "offset"},
		{"both variants", list3 + "?variant_id=main&variant_name=Demo%20IVR", "keyA", 400, "variant_name cannot be given with variant_id"},
		{"variant_id empty", list3 + "?variant_id=", "keyA", 400, "variant_id must not be empty"},
		{"in_progress", list3 + "?in_progress=yes", "keyA", 400, "in_progress must be true or false"},
		{"include_latency", list3 + "?include_latency=1", "keyA", 400, "include_latency must be true or false"},
		{"include_turn_metadata", list3 + "?include_turn_metadata=TRUE", "keyA", 400, "include_turn_metadata"},
		{"include_latency on v1", list1 + "?include_latency=true", "keyA", 400, "include_latency is supported on /v3/ only"},
		{"include_turn_metadata on v1", list1 + "?include_turn_metadata=false", "keyA", 400, "include_turn_metadata is supported on /v3/ only"},
		{"every problem at once", list3 + "?limit=0&offset=x&in_progress=maybe", "keyA", 400, "limit must be an integer between 1 and 5000; offset must be"},
		{"POST", list3, "keyA", 405, "not allowed"},
	}
	keys := map[string]string{"keyA": h.keyA, "keyB": h.keyB, "projKey2": h.projKey2, "agent": h.agent}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			key, ok := keys[c.key]
			if !ok {
				key = c.key
			}
			method := "GET"
			if c.status == 405 {
				method = "POST"
			}
			// A path that matches no route is not in the OpenAPI document.
			h.check = !strings.HasPrefix(c.path, "/v2/")
			defer func() { h.check = true }()
			res := h.do(method, c.path, key, nil).Expect(t, c.status)
			msg, _ := res.JSON(t)["error_message"].(string)
			if !strings.Contains(msg, c.mention) {
				t.Errorf("error_message %q does not mention %q", msg, c.mention)
			}
		})
	}
	// A project-scoped key of the project and the account's key both work.
	h.do("GET", list3, h.projKey, nil).Expect(t, 200)
	h.do("GET", list1+"?offset=0&limit=5000&in_progress=false&variant_name=Demo%20IVR&client_env=pre-release", h.keyA, nil).Expect(t, 200)
}

// FuzzConvQuery feeds arbitrary query strings to the parameter parser:
// it never panics, and what it accepts is within the documented ranges.
func FuzzConvQuery(f *testing.F) {
	for _, s := range []string{"", "limit=5000&offset=10", "client_env=sandbox&in_progress=true", "start_time=2026-11-21T10:00:00Z",
		"variant_id=a&variant_name=b", "include_latency=true", "limit=0", "offset=9007199254740991", "limit=%2B1", "end_time=2026-11-21T10:00:00.123456789%2B05:30"} {
		f.Add(s, true)
		f.Add(s, false)
	}
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, raw string, v3 bool) {
		vals, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		q, err := parseConvQuery(vals, v3, now, "acct", "proj")
		if err != nil {
			if e, ok := err.(*voiceops.Error); !ok || e.Kind != voiceops.KindBadRequest || len(e.Fields) == 0 {
				t.Fatalf("error %#v is not a 400 naming a parameter", err)
			}
			return
		}
		if q.limit < 1 || q.limit > maxConvLimit || q.offset < 0 || q.offset > maxConvOffset || !q.from.Before(q.to) ||
			(q.variantID != nil && q.variantName != nil) || (!v3 && (q.includeLatency || q.includeMetadata)) {
			t.Fatalf("accepted %q as %+v", raw, q)
		}
	})
}

// --- the encoder against encoding/json -------------------------------------------------

// The reference records: the same shapes written by encoding/json from
// structs. Text fields are `any` (a string, or nil for v1's null).
type refLatency struct {
	Turns int    `json:"turns"`
	Avg   *int64 `json:"avg_ms"`
	P50   *int64 `json:"p50_ms"`
	P95   *int64 `json:"p95_ms"`
	Max   *int64 `json:"max_ms"`
}

type refMetrics struct {
	CallDuration   string `json:"CALL_DURATION"`
	CallTurn       []any  `json:"CALL_TURN"`
	CallStart      any    `json:"CALL_START"`
	CallEnd        any    `json:"CALL_END"`
	EndReason      any    `json:"END_REASON"`
	FunctionErrors string `json:"FUNCTION_ERRORS"`
	ASRLang        any    `json:"ASR_LANG"`
	TTSLang        any    `json:"TTS_LANG"`
	// Only when a model answered a turn.
	ModelInputTokens  string `json:"MODEL_INPUT_TOKENS,omitempty"`
	ModelOutputTokens string `json:"MODEL_OUTPUT_TOKENS,omitempty"`
}

type refTurn struct {
	UserInput             any              `json:"user_input"`
	UserInputDTMF         any              `json:"user_input_dtmf"`
	UserInputDatetime     any              `json:"user_input_datetime"`
	AgentResponse         any              `json:"agent_response"`
	AgentResponseDatetime any              `json:"agent_response_datetime"`
	Latency               *float64         `json:"latency,omitempty"`
	TranslatedUserInput   *string          `json:"translated_user_input,omitempty"`
	EnglishAgentResponse  *string          `json:"english_agent_response,omitempty"`
	Intents               []string         `json:"intents"`
	Entities              []map[string]any `json:"entities"`
	IsOOD                 bool             `json:"is_ood"`
	IsSilence             bool             `json:"is_silence"`
	Metadata              *map[string]any  `json:"metadata,omitempty"`
	Model                 *refModel        `json:"model,omitempty"`
}

type refModel struct {
	ModelID         string        `json:"model_id"`
	InputTokens     int           `json:"input_tokens"`
	OutputTokens    int           `json:"output_tokens"`
	StopReason      string        `json:"stop_reason"`
	ModelLatencyMS  int64         `json:"model_latency_ms"`
	ToolCalls       []refToolCall `json:"tool_calls"`
	GuardrailAction string        `json:"guardrail_action"`
}

type refToolCall struct {
	Name       string `json:"name"`
	Outcome    string `json:"outcome"`
	DurationMS int64  `json:"duration_ms"`
}

type refConversation struct {
	ID                 string         `json:"id"`
	AccountID          string         `json:"account_id"`
	ProjectID          string         `json:"project_id"`
	Environment        any            `json:"environment"`
	StartedAt          any            `json:"started_at"`
	Channel            any            `json:"channel"`
	InProgress         bool           `json:"in_progress"`
	VariantID          any            `json:"variant_id"`
	VariantName        any            `json:"variant_name"`
	FromNumber         any            `json:"from_number"`
	ToNumber           any            `json:"to_number"`
	NumTurns           int            `json:"num_turns"`
	TotalDuration      int64          `json:"total_duration"`
	ServiceDuration    int64          `json:"service_duration"`
	Handoff            bool           `json:"handoff"`
	HandoffReason      any            `json:"handoff_reason"`
	HandoffDestination any            `json:"handoff_destination"`
	NumSilences        int            `json:"num_silences"`
	NumOOD             int            `json:"num_ood"`
	Metrics            refMetrics     `json:"metrics"`
	State              map[string]any `json:"state"`
	Latency            *refLatency    `json:"latency,omitempty"`
	Turns              []refTurn      `json:"turns"`
}

// refRecord builds the reference record of c as the encoder e would write it.
func refRecord(e convEncoder, c voiceops.Conversation, turns []voiceops.Turn) refConversation {
	text := func(s string) any {
		if s == "" && !e.v3 {
			return nil
		}
		return s
	}
	tm := func(t time.Time) any {
		if t.IsZero() {
			return text("")
		}
		if e.v3 {
			return t.UTC().Format(voiceops.TimeFormat)
		}
		return t.UTC().Format(time.RFC3339Nano)
	}
	orEmpty := func(m map[string]any) map[string]any {
		if m == nil {
			return map[string]any{}
		}
		return m
	}
	total := wholeSeconds(c.TotalDuration(e.now))
	r := refConversation{
		ID: c.ID, AccountID: c.AccountID, ProjectID: c.ProjectID, Environment: text(string(c.Environment)),
		StartedAt: tm(c.StartedAt), Channel: text(string(c.Channel)), InProgress: c.InProgress,
		VariantID: text(c.VariantID), VariantName: text(c.VariantName), FromNumber: text(c.FromNumber), ToNumber: text(c.ToNumber),
		NumTurns: c.NumTurns, TotalDuration: total, ServiceDuration: wholeSeconds(c.ServiceTime), Handoff: c.Handoff,
		HandoffReason: text(c.HandoffReason), HandoffDestination: text(c.HandoffDestination), NumSilences: c.NumSilences,
		NumOOD: c.NumOOD, State: orEmpty(c.State), Turns: []refTurn{},
		Metrics: refMetrics{CallDuration: strconv.FormatInt(total, 10), CallTurn: []any{}, CallStart: tm(c.StartedAt),
			CallEnd: text(""), EndReason: text(string(c.EndReason)), ASRLang: text(c.ASRLang), TTSLang: text(c.TTSLang),
			FunctionErrors: "0"},
	}
	if c.EndedAt != nil {
		r.Metrics.CallEnd = tm(*c.EndedAt)
	}
	var ms []int64
	ferrs := 0
	for _, t := range turns {
		r.Metrics.CallTurn = append(r.Metrics.CallTurn, tm(t.UserInputAt))
		ferrs += t.FunctionErrors
		r.Metrics.FunctionErrors = strconv.Itoa(ferrs)
		if t.Model != nil {
			in, _ := strconv.Atoi(r.Metrics.ModelInputTokens)
			out, _ := strconv.Atoi(r.Metrics.ModelOutputTokens)
			r.Metrics.ModelInputTokens, r.Metrics.ModelOutputTokens = strconv.Itoa(in+t.Model.InputTokens), strconv.Itoa(out+t.Model.OutputTokens)
		}
		ms = append(ms, t.Latency.Round(time.Millisecond).Milliseconds())
		rt := refTurn{UserInput: text(t.UserInput), UserInputDTMF: text(t.UserInputDTMF), UserInputDatetime: tm(t.UserInputAt),
			AgentResponse: text(t.AgentResponse), AgentResponseDatetime: tm(t.AgentResponseAt),
			Intents: t.Intents, Entities: t.Entities, IsOOD: t.IsOOD, IsSilence: t.IsSilence}
		if rt.Intents == nil {
			rt.Intents = []string{}
		}
		if rt.Entities == nil {
			rt.Entities = []map[string]any{}
		}
		for i, m := range rt.Entities {
			rt.Entities[i] = orEmpty(m)
		}
		if e.v3 {
			lat, tr, en := latencySeconds(t.Latency), t.TranslatedUserInput, t.EnglishAgentResponse
			rt.Latency, rt.TranslatedUserInput, rt.EnglishAgentResponse = &lat, &tr, &en
			if e.metadata {
				md := orEmpty(t.Metadata)
				rt.Metadata = &md
				if m := t.Model; m != nil {
					rt.Model = &refModel{ModelID: m.ModelID, InputTokens: m.InputTokens, OutputTokens: m.OutputTokens, StopReason: m.StopReason,
						ModelLatencyMS: m.ModelLatency.Milliseconds(), ToolCalls: []refToolCall{}, GuardrailAction: m.GuardrailAction}
					for _, c := range m.ToolCalls {
						rt.Model.ToolCalls = append(rt.Model.ToolCalls, refToolCall{Name: c.Name, Outcome: c.Outcome, DurationMS: c.Duration.Milliseconds()})
					}
				}
			}
		}
		r.Turns = append(r.Turns, rt)
	}
	if e.v3 && e.latency {
		r.Latency = refLatencyOf(len(turns), ms)
	}
	return r
}

func marshalRef(tb testing.TB, v any) []byte {
	tb.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		tb.Fatal(err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// TestConvEncoderMatchesEncodingJSON: the append encoder writes exactly
// the bytes encoding/json writes for the same record, in every shape.
func TestConvEncoderMatchesEncodingJSON(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	fixtures := append(goldenFixtures(), benchConversations(20, 10)...)
	rng := rand.New(rand.NewPCG(1, 2))
	odd := []string{"\"", "\\", "\x00", "\x7f", "<script>", "\u2028", "\xff", "😀", "é", "\t\n"}
	for i := range 20 { // random text everywhere
		f := benchConversations(1, 3)[0]
		s := func() string {
			var b strings.Builder
			for range rng.IntN(6) {
				b.WriteString(odd[rng.IntN(len(odd))])
			}
			return b.String()
		}
		f.c.VariantName, f.c.HandoffReason, f.c.FromNumber = s(), s(), s()
		f.c.State = map[string]any{s(): s(), "n": rng.NormFloat64() * 1e25, "i": float64(rng.IntN(1000)), s() + "x": []any{s(), true, nil}}
		for j := range f.turns {
			f.turns[j].UserInput, f.turns[j].AgentResponse = s(), s()
			f.turns[j].Latency = time.Duration(rng.IntN(5_000_000_000))
			f.turns[j].Metadata = map[string]any{"k" + strconv.Itoa(i): s()}
			if j%2 == 1 {
				f.turns[j].Model = &voiceops.TurnModel{ModelID: s(), InputTokens: rng.IntN(5000), OutputTokens: rng.IntN(500), StopReason: s(),
					ModelLatency: time.Duration(rng.IntN(5_000_000_000)), GuardrailAction: s()}
				if j%4 == 1 {
					f.turns[j].Model.ToolCalls = []voiceops.ToolCall{{Name: s(), Outcome: "ok", Duration: time.Duration(rng.IntN(1e9))}, {Name: s(), Outcome: s()}}
				}
			}
		}
		fixtures = append(fixtures, f)
	}
	for _, enc := range []convEncoder{{v3: true, now: now}, {v3: true, latency: true, metadata: true, now: now}, {now: now}} {
		for _, f := range fixtures {
			got := enc.appendRecord(nil, f.c, f.turns)
			want := marshalRef(t, refRecord(enc, f.c, f.turns))
			if !bytes.Equal(got, want) {
				t.Fatalf("v3=%v %s:\nappend:        %s\nencoding/json: %s", enc.v3, f.c.ID, got, want)
			}
		}
	}
}

// --- pagination ---------------------------------------------------------------------------

// listClient walks a conversations list through an http.Handler.
type listClient struct {
	tb  testing.TB
	h   http.Handler
	key string
	// check, when set, validates each response against the OpenAPI document.
	check bool
}

type listPage struct {
	IDs        []string
	NextOffset *int64
	Cursor     *string
	Body       []byte
}

func (lc listClient) get(path string) listPage {
	lc.tb.Helper()
	req := httptest.NewRequest("GET", path, nil)
	req.Header.Set("x-api-key", lc.key)
	rec := httptest.NewRecorder()
	lc.h.ServeHTTP(rec, req)
	if rec.Code != 200 {
		lc.tb.Fatalf("GET %s: %d %s", path, rec.Code, rec.Body.Bytes())
	}
	if lc.check {
		if err := spectest.Validator(lc.tb).Check(req, rec.Code, rec.Header(), rec.Body.Bytes()); err != nil {
			lc.tb.Errorf("GET %s: response does not match the OpenAPI document: %v", path, err)
		}
	}
	var body struct {
		Conversations []struct {
			ID string `json:"id"`
		} `json:"conversations"`
		NextOffset *int64  `json:"next_offset"`
		Cursor     *string `json:"cursor"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		lc.tb.Fatalf("GET %s: %v", path, err)
	}
	p := listPage{NextOffset: body.NextOffset, Cursor: body.Cursor, Body: rec.Body.Bytes()}
	for _, c := range body.Conversations {
		p.IDs = append(p.IDs, c.ID)
	}
	return p
}

// walk follows next_offset from offset 0, calling between(page) after each
// page, and returns every ID listed in order.
func (lc listClient) walk(base string, limit int, between func(ids []string)) []string {
	lc.tb.Helper()
	var all []string
	offset := int64(0)
	for pages := 0; ; pages++ {
		if pages > 10000 {
			lc.tb.Fatal("the walk does not end")
		}
		sep := "?"
		if strings.Contains(base, "?") {
			sep = "&"
		}
		p := lc.get(fmt.Sprintf("%s%slimit=%d&offset=%d", base, sep, limit, offset))
		if len(p.IDs) > limit {
			lc.tb.Fatalf("%d conversations on a page of limit %d", len(p.IDs), limit)
		}
		all = append(all, p.IDs...)
		if p.NextOffset == nil {
			return all
		}
		if *p.NextOffset != offset+int64(len(p.IDs)) || len(p.IDs) == 0 {
			lc.tb.Fatalf("next_offset %d after offset %d and %d conversations", *p.NextOffset, offset, len(p.IDs))
		}
		offset = *p.NextOffset
		if between != nil {
			between(all)
		}
	}
}

// walkCursor follows cursor from the first page, calling between(page)
// after each page, and returns every ID listed in order.
func (lc listClient) walkCursor(base string, limit int, between func(ids []string)) []string {
	lc.tb.Helper()
	var all []string
	cursor := ""
	sep := "?"
	if strings.Contains(base, "?") {
		sep = "&"
	}
	for pages := 0; ; pages++ {
		if pages > 10000 {
			lc.tb.Fatal("the walk does not end")
		}
		path := fmt.Sprintf("%s%slimit=%d", base, sep, limit)
		if cursor != "" {
			path += "&cursor=" + url.QueryEscape(cursor)
		}
		p := lc.get(path)
		if len(p.IDs) > limit {
			lc.tb.Fatalf("%d conversations on a page of limit %d", len(p.IDs), limit)
		}
		if cursor != "" && p.NextOffset != nil {
			lc.tb.Fatalf("next_offset on a page asked by cursor")
		}
		all = append(all, p.IDs...)
		if p.Cursor == nil {
			return all
		}
		if *p.Cursor == "" || url.QueryEscape(*p.Cursor) != *p.Cursor {
			lc.tb.Fatalf("cursor %q is not opaque URL-safe text", *p.Cursor)
		}
		cursor = *p.Cursor
		if between != nil && len(all) > 0 {
			between(all)
		}
	}
}

// population is a project's conversations as a test knows them.
type population struct {
	mu    sync.Mutex
	convs []voiceops.Conversation
}

func (p *population) add(c voiceops.Conversation) {
	p.mu.Lock()
	p.convs = append(p.convs, c)
	p.mu.Unlock()
}

// want returns the IDs that match, ascending.
func (p *population) want(q convQuery) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var ids []string
	for _, c := range p.convs {
		started := time.UnixMilli(c.StartedAt.UnixMilli())
		if q.match(c) && !started.Before(q.from) && started.Before(q.to) {
			ids = append(ids, c.ID)
		}
	}
	slices.Sort(ids)
	return ids
}

// randomConversation is a conversation of acct_a/proj_a1 with random
// environment, variant and progress, started at start.
func randomConversation(rng *rand.Rand, start time.Time) convFixture {
	f := conversationAt(start)
	switch rng.IntN(10) {
	case 0, 1:
		f.c.Environment = voiceops.EnvSandbox
	case 2:
		f.c.Environment = voiceops.EnvPreRelease
	}
	if rng.IntN(3) == 0 {
		f.c.VariantID, f.c.VariantName = "express", "Express lane"
	}
	if rng.IntN(4) == 0 {
		f.c.InProgress, f.c.EndedAt, f.c.EndReason = true, nil, ""
	}
	f.c.Channel = voiceops.Channels[rng.IntN(len(voiceops.Channels))]
	return f
}

// paginationCase is one walk: a query (its parameters, and the filter the
// test applies to know the answer) and a page size.
type paginationCase struct {
	name   string
	params string
	limit  int
}

func paginationCases(from, to time.Time) []paginationCase {
	rng := fmt.Sprintf("start_time=%s&end_time=%s", from.Format(time.RFC3339Nano), to.Format(time.RFC3339Nano))
	eighth := fmt.Sprintf("start_time=%s&end_time=%s", from.Format(time.RFC3339Nano), from.Add(to.Sub(from)/8).Format(time.RFC3339Nano))
	return []paginationCase{
		{"no filters", "", 97},
		{"sandbox", "client_env=sandbox", 31},
		{"variant and finished", "variant_id=express&in_progress=false", 50},
		{"variant name in progress, time range", "variant_name=Demo%20IVR&in_progress=true&" + rng, 13},
		{"pre-release, one per page", "client_env=pre-release&" + eighth, 1},
		{"everything on one page", "", 5000},
		{"voice only", "channel=voice", 23},
		{"two chat channels, finished", "channel=webchat&channel=sms&in_progress=false", 17},
	}
}

// expectWalk checks that a walk listed exactly want, in order.
func expectWalk(t *testing.T, got, want []string) {
	t.Helper()
	seen := map[string]bool{}
	for _, id := range got {
		if seen[id] {
			t.Errorf("%s listed twice", id)
		}
		seen[id] = true
	}
	for _, id := range want {
		if !seen[id] {
			t.Errorf("%s never listed", id)
		}
	}
	if len(got) == len(want) && !slices.Equal(got, want) {
		t.Errorf("not in ascending order")
	}
	if len(got) != len(want) {
		t.Errorf("listed %d conversations, want %d", len(got), len(want))
	}
}

// runPagination walks each case over a population (in v3, and in v1
// too with bothVersions), then walks again with conversations added
// during the walk after the cursor.
func runPagination(t *testing.T, h http.Handler, key string, store voiceops.ConversationStore, pop *population,
	cases []paginationCase, now time.Time, bothVersions bool, addPerPage int) {
	lc := listClient{tb: t, h: h, key: key}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			lc.tb = t
			vals, _ := url.ParseQuery(c.params)
			q, err := parseConvQuery(vals, true, now, "acct", "proj")
			if err != nil {
				t.Fatal(err)
			}
			want := pop.want(q)
			if len(want) == 0 {
				t.Fatalf("the case matches nothing: %s", c.params)
			}
			got := lc.walk("/v3/acct_a/proj_a1/conversations?"+c.params, c.limit, nil)
			expectWalk(t, got, want)
			byCursor := lc.walkCursor("/v3/acct_a/proj_a1/conversations?"+c.params, c.limit, nil)
			expectWalk(t, byCursor, want)
			if !bothVersions || q.channels != nil {
				return
			}
			v1 := lc.walk("/v1/acct_a/proj_a1/conversations?"+c.params, c.limit, nil)
			if !slices.Equal(v1, got) {
				t.Errorf("v1 lists %d conversations, v3 %d, or in another order", len(v1), len(got))
			}
		})
	}
	t.Run("conversations added during the walk", func(t *testing.T) {
		lc.tb = t
		rng := rand.New(rand.NewPCG(7, 8))
		added := 0
		between := func(ids []string) {
			// New conversations start after the cursor (the last ID
			// listed) and before now: later pages must list them.
			last, _, _ := voiceops.ParseConversationID(ids[len(ids)-1])
			span := now.Sub(last) - time.Millisecond
			for range addPerPage {
				f := randomConversation(rng, last.Add(time.Millisecond+time.Duration(rng.Int64N(int64(span)))))
				putConversation(t, store, f)
				pop.add(f.c)
				added++
			}
		}
		for _, params := range []string{"", "variant_id=express&in_progress=true", "channel=voice&channel=api"} {
			got := lc.walk("/v3/acct_a/proj_a1/conversations?"+params, 41, between)
			vals, _ := url.ParseQuery(params)
			q, _ := parseConvQuery(vals, true, now, "acct", "proj")
			expectWalk(t, got, pop.want(q))
			got = lc.walkCursor("/v3/acct_a/proj_a1/conversations?"+params, 41, between)
			expectWalk(t, got, pop.want(q))
		}
		if added == 0 {
			t.Fatal("nothing was added")
		}
	})
}

// TestConversationsPaginationMemory walks thousands of conversations on
// the memory store.
func TestConversationsPaginationMemory(t *testing.T) {
	h := newHarness(t)
	h.check = false
	now := h.clock.Now()
	rng := rand.New(rand.NewPCG(3, 4))
	pop := &population{}
	first := now.Add(-72 * time.Hour)
	for i := range 3000 {
		// Several conversations share a millisecond now and then.
		start := first.Add(time.Duration(i/3)*86*time.Millisecond*1000 + time.Duration(rng.IntN(3))*time.Millisecond)
		f := randomConversation(rng, start)
		putConversation(t, h.stores.Conversations, f)
		pop.add(f.c)
	}
	runPagination(t, h.h, h.keyA, h.stores.Conversations, pop, paginationCases(first.Add(5*time.Hour), first.Add(50*time.Hour)), now, true, 7)
	// A sample of pages against the OpenAPI document.
	lc := listClient{tb: t, h: h.h, key: h.keyA, check: true}
	lc.get("/v3/acct_a/proj_a1/conversations?limit=20&offset=100&include_latency=true&include_turn_metadata=true")
	lc.get("/v1/acct_a/proj_a1/conversations?limit=20&offset=100")
}

// TestConversationsPaginationDynamo walks conversations on DynamoDB (moto
// at TEST_AWS_ENDPOINT; small enough to run in seconds).
func TestConversationsPaginationDynamo(t *testing.T) {
	ctx := context.Background()
	db := awstest.DynamoDB(t)
	names := awstest.Tables(t, db)
	cdb := &countingDB{DB: db}
	stores := dynamo.NewStores(cdb, names)
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	clk := func() time.Time { return now }
	prov := provision.Provisioner{Accounts: stores.Accounts, Region: voiceops.RegionUS, Now: clk}
	if _, err := prov.CreateAccount(ctx, "acct_a", "a"); err != nil {
		t.Fatal(err)
	}
	if _, err := prov.CreateProject(ctx, "acct_a", "proj_a1", "p"); err != nil {
		t.Fatal(err)
	}
	key, _, err := prov.CreateKey(ctx, voiceops.KeyAPI, "acct_a", "")
	if err != nil {
		t.Fatal(err)
	}
	h := conversationsHandler(stores, auth.New(stores.Accounts, voiceops.RegionUS, clk), clk)
	rng := rand.New(rand.NewPCG(5, 6))
	pop := &population{}
	seeded := time.Now()
	// Over three hours, so that listings span hour partitions; moto slows
	// down as a table grows, hence the small population.
	first := now.Add(-3 * time.Hour)
	for i := range 150 {
		f := randomConversation(rng, first.Add(time.Duration(i)*70*time.Second+time.Duration(rng.IntN(2))*time.Millisecond))
		putConversation(t, stores.Conversations, f)
		pop.add(f.c)
	}
	t.Logf("150 conversations stored in %s", time.Since(seeded).Round(time.Millisecond))
	all := paginationCases(first.Add(20*time.Minute), first.Add(2*time.Hour))
	cases := []paginationCase{all[0], all[2], all[3]}
	cases[0].limit, cases[1].limit, cases[2].limit = 40, 15, 4
	cdb.queries.Store(0)
	walked := time.Now()
	runPagination(t, h, key, stores.Conversations, pop, cases, now, false, 3)
	t.Logf("walks: %s, %d DynamoDB queries", time.Since(walked).Round(time.Millisecond), cdb.queries.Load())
}

// countingDB counts the queries a DynamoDB store sends.
type countingDB struct {
	dynamo.DB
	queries atomic.Int64
}

func (c *countingDB) Query(ctx context.Context, in *dynamodb.QueryInput, o ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	c.queries.Add(1)
	return c.DB.Query(ctx, in, o...)
}

// TestConversationsOffsetSkipsKeysOnly: a deep offset is skipped over
// interval records; whole conversations are read only for the page.
func TestConversationsOffsetSkipsKeysOnly(t *testing.T) {
	var counter *countingConversations
	h := newHarnessWith(t, func(s voiceops.Stores) voiceops.Stores {
		counter = &countingConversations{ConversationStore: s.Conversations, delay: time.Millisecond}
		s.Conversations = counter
		return s
	})
	h.check = false
	now := h.clock.Now()
	for i := range 2000 {
		putConversation(t, h.stores.Conversations, conversationAt(now.Add(-time.Duration(2000-i)*time.Minute)))
	}
	counter.reset()
	p := listClient{tb: t, h: h.h, key: h.keyA}.get("/v3/acct_a/proj_a1/conversations?offset=1900&limit=5")
	if len(p.IDs) != 5 || p.NextOffset == nil || *p.NextOffset != 1905 {
		t.Fatalf("page %v next %v", p.IDs, p.NextOffset)
	}
	full, intervals := counter.full.Load(), counter.intervals.Load()
	t.Logf("offset 1900, limit 5: %d whole conversations read, %d interval records, %d Turns reads", full, intervals, counter.turns.Load())
	if full > 20 {
		t.Errorf("%d whole conversations read for a page of 5", full)
	}
	if intervals < 1900 {
		t.Errorf("%d interval records read: the offset was not skipped over intervals", intervals)
	}
	if n := counter.turns.Load(); n != 5 {
		t.Errorf("%d Turns reads, want one per listed conversation", n)
	}
	// A full page reads turns concurrently, boundedly.
	counter.reset()
	listClient{tb: t, h: h.h, key: h.keyA}.get("/v3/acct_a/proj_a1/conversations?limit=300")
	if peak := counter.peak.Load(); peak < 2 || peak > convlist.TurnsInFlight {
		t.Errorf("%d Turns reads in flight at most, want 2 to %d", peak, convlist.TurnsInFlight)
	}
	// Past the end: empty, without next_offset.
	p = listClient{tb: t, h: h.h, key: h.keyA}.get("/v3/acct_a/proj_a1/conversations?offset=2000")
	if len(p.IDs) != 0 || p.NextOffset != nil {
		t.Errorf("past the end: %v %v", p.IDs, p.NextOffset)
	}
}

// countingConversations counts what a store reads.
type countingConversations struct {
	voiceops.ConversationStore
	delay                  time.Duration // added to each Turns read
	full, intervals, turns atomic.Int64
	inFlight, peak         atomic.Int64
}

func (c *countingConversations) reset() {
	c.full.Store(0)
	c.intervals.Store(0)
	c.turns.Store(0)
	c.peak.Store(0)
}

func (c *countingConversations) ListConversations(ctx context.Context, a, p string, from, to time.Time, after string, limit int) ([]voiceops.Conversation, error) {
	out, err := c.ConversationStore.ListConversations(ctx, a, p, from, to, after, limit)
	c.full.Add(int64(len(out)))
	return out, err
}

func (c *countingConversations) ListConversationIntervals(ctx context.Context, a, p string, from, to time.Time, after string, limit int) ([]voiceops.Conversation, error) {
	out, err := c.ConversationStore.ListConversationIntervals(ctx, a, p, from, to, after, limit)
	c.intervals.Add(int64(len(out)))
	return out, err
}

func (c *countingConversations) Turns(ctx context.Context, a, p, id string) ([]voiceops.Turn, error) {
	n := c.inFlight.Add(1)
	defer c.inFlight.Add(-1)
	for {
		peak := c.peak.Load()
		if n <= peak || c.peak.CompareAndSwap(peak, n) {
			break
		}
	}
	c.turns.Add(1)
	time.Sleep(c.delay)
	return c.ConversationStore.Turns(ctx, a, p, id)
}

// --- the 5 MiB cut -----------------------------------------------------------------------

// lambdaPayload is the size of the Lambda response that carries an HTTP
// response through the adapter, as the runtime encodes it.
func lambdaPayload(tb testing.TB, res events.APIGatewayV2HTTPResponse) int {
	tb.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // the aws-lambda-go default
	if err := enc.Encode(res); err != nil {
		tb.Fatal(err)
	}
	return buf.Len()
}

// TestConversationsPageByteBudget lists conversations far larger than a
// page can hold: each page stays within 5 MiB (as carried by Lambda, with
// quote-heavy text), next_offset points at the rest, and the walk lists
// every conversation once.
func TestConversationsPageByteBudget(t *testing.T) {
	h := newHarness(t)
	h.check = false
	now := h.clock.Now()
	quotes := strings.Repeat(`say "yes" \ `, 8_000) // ~100 KB, a third quotes and backslashes
	var ids []string
	for i := range 120 {
		f := conversationAt(now.Add(-time.Duration(120-i) * time.Minute))
		f.c.State = map[string]any{"transcript": quotes, "i": float64(i)}
		f.c.NumTurns = 4
		for j := 1; j < 4; j++ {
			f.turns = append(f.turns, voiceops.Turn{Index: j, UserInput: quotes[:20_000], UserInputAt: f.c.StartedAt.Add(time.Duration(j) * time.Second),
				AgentResponse: "ok", AgentResponseAt: f.c.StartedAt.Add(time.Duration(j)*time.Second + 300*time.Millisecond)})
		}
		putConversation(t, h.stores.Conversations, f)
		ids = append(ids, f.c.ID)
	}
	lh := httpapi.LambdaHandler(h.h)
	var got []string
	offset, pages := 0, 0
	for {
		path := fmt.Sprintf("/v3/acct_a/proj_a1/conversations?limit=5000&offset=%d", offset)
		res, err := lh(context.Background(), events.APIGatewayV2HTTPRequest{Version: "2.0", RawPath: "/v3/acct_a/proj_a1/conversations",
			RawQueryString: fmt.Sprintf("limit=5000&offset=%d", offset), Headers: map[string]string{"x-api-key": h.keyA},
			RequestContext: events.APIGatewayV2HTTPRequestContext{HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: "GET", Path: "/v3/acct_a/proj_a1/conversations"}}})
		if err != nil || res.StatusCode != 200 || res.IsBase64Encoded {
			t.Fatalf("%s: %d %v base64=%v", path, res.StatusCode, err, res.IsBase64Encoded)
		}
		body := []byte(res.Body)
		escaped, _ := json.Marshal(res.Body)
		if len(body) > convPageBudget || len(escaped)-2 > convPageBudget {
			t.Errorf("page at offset %d: %d bytes of JSON, %d once escaped; the budget is %d", offset, len(body), len(escaped)-2, convPageBudget)
		}
		if n := lambdaPayload(t, res); n > 6_000_000 {
			t.Errorf("Lambda response of %d bytes", n)
		}
		var page struct {
			Conversations []struct {
				ID    string `json:"id"`
				Turns []any  `json:"turns"`
			} `json:"conversations"`
			NextOffset *int `json:"next_offset"`
		}
		if err := json.Unmarshal(body, &page); err != nil {
			t.Fatal(err)
		}
		for _, c := range page.Conversations {
			got = append(got, c.ID)
			if len(c.Turns) != 4 {
				t.Errorf("%s: %d turns", c.ID, len(c.Turns))
			}
		}
		pages++
		t.Logf("page %d: %d conversations, %d bytes, %d escaped", pages, len(page.Conversations), len(body), len(escaped)-2)
		if page.NextOffset == nil {
			break
		}
		if *page.NextOffset != offset+len(page.Conversations) || len(escaped)-2 < convPageBudget-600_000 {
			t.Errorf("next_offset %d after offset %d and %d conversations of %d escaped bytes: cut too early", *page.NextOffset, offset, len(page.Conversations), len(escaped)-2)
		}
		offset = *page.NextOffset
	}
	if pages < 3 {
		t.Errorf("%d pages: the budget did not cut", pages)
	}
	expectWalk(t, got, ids)
}

// TestConversationsOversizedConversation: one conversation larger than a
// page alone is returned alone, with the turns that fit.
func TestConversationsOversizedConversation(t *testing.T) {
	h := newHarness(t)
	h.check = false
	now := h.clock.Now()
	big := conversationAt(now.Add(-time.Hour))
	blob := strings.Repeat("x", 350_000)
	big.c.NumTurns = 20
	for j := 1; j < 20; j++ {
		big.turns = append(big.turns, voiceops.Turn{Index: j, UserInput: "hi", UserInputAt: big.c.StartedAt.Add(time.Duration(j) * time.Second),
			AgentResponse: "hello", AgentResponseAt: big.c.StartedAt.Add(time.Duration(j) * time.Second), Metadata: map[string]any{"blob": blob}})
	}
	putConversation(t, h.stores.Conversations, big)
	small := conversationAt(now.Add(-time.Minute))
	putConversation(t, h.stores.Conversations, small)

	lc := listClient{tb: t, h: h.h, key: h.keyA}
	p := lc.get("/v3/acct_a/proj_a1/conversations?include_turn_metadata=true")
	if !slices.Equal(p.IDs, []string{big.c.ID}) || p.NextOffset == nil || *p.NextOffset != 1 || wireCost(p.Body) > convPageBudget {
		t.Fatalf("page of %v, next %v, %d bytes", p.IDs, p.NextOffset, wireCost(p.Body))
	}
	var page struct {
		Conversations []struct {
			NumTurns int   `json:"num_turns"`
			Turns    []any `json:"turns"`
		} `json:"conversations"`
	}
	_ = json.Unmarshal(p.Body, &page)
	if c := page.Conversations[0]; c.NumTurns != 20 || len(c.Turns) < 10 || len(c.Turns) >= 20 {
		t.Errorf("num_turns %d with %d turns returned, want 20 with a prefix of 10 to 19", c.NumTurns, len(c.Turns))
	}
	if p := lc.get("/v3/acct_a/proj_a1/conversations?include_turn_metadata=true&offset=1"); !slices.Equal(p.IDs, []string{small.c.ID}) || p.NextOffset != nil {
		t.Errorf("second page %v next %v", p.IDs, p.NextOffset)
	}
	// Without metadata it fits whole.
	if p := lc.get("/v3/acct_a/proj_a1/conversations"); len(p.IDs) != 2 {
		t.Errorf("without metadata: %v", p.IDs)
	}
}

// --- benchmark ------------------------------------------------------------------------------

// BenchmarkConversationPage encodes a limit=5000 page of conversations of
// 10 turns each (v3, both include_* flags):
//
//   - append/page: the handler's page builder, cut at the 5 MiB budget
//     (what a response carries); encoding-json/page: the same page built
//     with encoding/json, record by record;
//
//   - append/all and encoding-json/all: the 5000 records whole, with the
//     append encoder and with encoding/json on equivalent structs (the
//     same bytes), for the comparison.
//
//     go test -run '^$' -bench ConversationPage -benchmem ./shared/conversations/conversationsapi/
func BenchmarkConversationPage(b *testing.B) {
	convs := benchConversations(5000, 10)
	enc := convEncoder{v3: true, latency: true, metadata: true, now: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)}
	b.Run("append/page", func(b *testing.B) {
		b.ReportAllocs()
		var body []byte
		var n int
		for b.Loop() {
			p := newConvPage(enc, len(convs))
			for _, f := range convs {
				if !p.add(f.c, f.turns) {
					break
				}
			}
			n = p.n
			body = p.finish(convTail{more: true, offset: true, nextOffset: int64(n)})
		}
		b.ReportMetric(float64(len(body)), "bytes/page")
		b.ReportMetric(float64(wireCost(body)), "wire-bytes/page")
		b.ReportMetric(float64(n), "conversations/page")
	})
	b.Run("encoding-json/page", func(b *testing.B) {
		// The same page with encoding/json: each record marshalled alone
		// to be measured against the budget.
		b.ReportAllocs()
		var size, n int
		for b.Loop() {
			buf := bytes.NewBuffer(make([]byte, 0, convPageBudget+convPageBudget/8))
			buf.WriteString(convPageHead)
			je := json.NewEncoder(buf)
			je.SetEscapeHTML(false)
			cost, budget := wireCost(buf.Bytes()), convPageBudget-200
			n = 0
			for _, f := range convs {
				mark := buf.Len()
				if n > 0 {
					buf.WriteByte(',')
				}
				if err := je.Encode(refRecord(enc, f.c, f.turns)); err != nil {
					b.Fatal(err)
				}
				buf.Truncate(buf.Len() - 1) // the encoder's newline
				c := wireCost(buf.Bytes()[mark:])
				if cost+c > budget {
					buf.Truncate(mark)
					break
				}
				cost += c
				n++
			}
			buf.WriteString("]}\n")
			size = buf.Len()
		}
		b.ReportMetric(float64(size), "bytes/page")
		b.ReportMetric(float64(n), "conversations/page")
	})
	b.Run("append/all", func(b *testing.B) {
		b.ReportAllocs()
		var buf []byte
		for b.Loop() {
			buf = append(buf[:0], convPageHead...)
			for i, f := range convs {
				if i > 0 {
					buf = append(buf, ',')
				}
				buf = enc.appendRecord(buf, f.c, f.turns)
			}
			buf = append(buf, "]}\n"...)
		}
		b.ReportMetric(float64(len(buf)), "bytes/page")
	})
	b.Run("encoding-json/all", func(b *testing.B) {
		b.ReportAllocs()
		var n int
		for b.Loop() {
			page := struct {
				Conversations []refConversation `json:"conversations"`
			}{Conversations: make([]refConversation, len(convs))}
			for i, f := range convs {
				page.Conversations[i] = refRecord(enc, f.c, f.turns)
			}
			var buf bytes.Buffer
			je := json.NewEncoder(&buf)
			je.SetEscapeHTML(false)
			if err := je.Encode(page); err != nil {
				b.Fatal(err)
			}
			n = buf.Len()
		}
		b.ReportMetric(float64(n), "bytes/page")
	})
}

// BenchmarkListConversations is the whole request over the memory store:
// a limit=5000 page of conversations of 10 turns each, through routing,
// authentication, the store reads (turns concurrently) and the encoding.
func BenchmarkListConversations(b *testing.B) {
	h := newHarness(b)
	h.check = false
	for _, f := range benchConversations(5000, 10) {
		f.c.AccountID, f.c.ProjectID = "acct_a", "proj_a1"
		putConversation(b, h.stores.Conversations, f)
	}
	lh := httpapi.LambdaHandler(h.h)
	ev := benchEvent("GET", "/v3/acct_a/proj_a1/conversations", h.keyA, "")
	ev.RawQueryString = "limit=5000&start_time=2026-11-20T00:00:00Z"
	ctx := context.Background()
	b.ReportAllocs()
	var size, n int
	for b.Loop() {
		res, err := lh(ctx, ev)
		if err != nil || res.StatusCode != 200 {
			b.Fatalf("%d %v %.200s", res.StatusCode, err, res.Body)
		}
		size = len(res.Body)
		n = strings.Count(res.Body, `"account_id"`)
	}
	b.ReportMetric(float64(size), "bytes/page")
	b.ReportMetric(float64(n), "conversations/page")
}

// refLatencyOf is the reference of a conversation's latency block: turns
// counted, and the average, nearest-rank p50 and p95 and the maximum of
// the turns' latencies ms (sorted in place), none when there are none.
func refLatencyOf(turns int, ms []int64) *refLatency {
	l := &refLatency{Turns: turns}
	if len(ms) == 0 {
		return l
	}
	slices.Sort(ms)
	var sum int64
	for _, v := range ms {
		sum += v
	}
	avg := int64(float64(sum)/float64(len(ms)) + 0.5)
	rank := func(p float64) *int64 {
		i := int(p*float64(len(ms))+0.999999999) - 1
		return &ms[max(i, 0)]
	}
	l.Avg, l.P50, l.P95, l.Max = &avg, rank(0.5), rank(0.95), &ms[len(ms)-1]
	return l
}
