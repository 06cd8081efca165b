package conversationsapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/voiceops/opsapi/shared/platform/httpapi"
	"github.com/voiceops/opsapi/shared/testsupport/abbench"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// BenchmarkListRequestAB is the v3 conversations list as a whole request
// (the Lambda adapter, routing, authentication, the memory store's reads,
// the page's encoding) with the handler's page builder, against the same
// request where only the page is built with encoding/json (typed structs,
// record by record against the same budget): the same reads, interleaved
// round by round (shared/testsupport/abbench).
//
// The store holds 5,000 conversations of 10 turns each; both include_*
// flags are set. limit=5000 asks for all of them, but the 5 MiB budget
// holds only the first N (reported as conversations/page, stated by
// scripts/bench); limit=30 is a page of the size a console shows.
//
//	go test ./shared/conversations/conversationsapi -run '^$' -bench ListRequestAB
func BenchmarkListRequestAB(b *testing.B) {
	h := newHarness(b)
	h.check = false
	for _, f := range benchConversations(5000, 10) {
		f.c.AccountID, f.c.ProjectID = "acct_a", "proj_a1"
		putConversation(b, h.stores.Conversations, f)
	}
	auth := authFor(h.stores, h.clock.Now)
	handler := func(newPage func(convEncoder, int) pageWriter) func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		g := &Conversations{Store: h.stores.Conversations, Now: h.clock.Now, newPage: newPage}
		return httpapi.LambdaHandler(httpapi.New(httpapi.Config{Keys: auth, Projects: h.stores.Accounts, Now: h.clock.Now, Log: slog.New(slog.NewTextHandler(io.Discard, nil))},
			g.Routes(), (&Concurrency{Store: h.stores.Conversations, Now: h.clock.Now}).Routes(), (&Handoff{Store: h.stores.Conversations}).Routes()))
	}
	ours := handler(nil)
	std := handler(func(enc convEncoder, limit int) pageWriter { return newJSONPage(enc) })
	ctx := context.Background()
	for _, limit := range []int{5000, 30} {
		b.Run(fmt.Sprintf("limit=%d", limit), func(b *testing.B) {
			ev := benchEvent("GET", "/v3/acct_a/proj_a1/conversations", h.keyA, "")
			ev.RawQueryString = fmt.Sprintf("limit=%d&start_time=2026-11-20T00:00:00Z&include_latency=true&include_turn_metadata=true", limit)
			call := func(lh func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error)) string {
				res, err := lh(ctx, ev)
				if err != nil || res.StatusCode != 200 {
					b.Fatalf("%d %v %.200s", res.StatusCode, err, res.Body)
				}
				return res.Body
			}
			// Both write the same bytes: the baseline is the same response.
			a, base := call(ours), call(std)
			if a != base {
				i := 0
				for i < len(a) && i < len(base) && a[i] == base[i] {
					i++
				}
				b.Fatalf("the encoding/json page differs at byte %d:\n%.300s\n%.300s", i, a[max(i-100, 0):], base[max(i-100, 0):])
			}
			abbench.Run(b, func() { call(ours) }, func() { call(std) })
			b.ReportMetric(float64(strings.Count(a, `"account_id"`)), "conversations/page")
			b.ReportMetric(float64(len(a)), "bytes/page")
			b.ReportMetric(float64(wireCost([]byte(a))), "wire-bytes/page")
		})
	}
}

// jsonPage is convPage built with encoding/json: each record marshalled
// alone from typed structs (no `any` boxing of text fields) and kept while
// the page's wire cost stays within the same budget.
type jsonPage struct {
	p   *convPage // its budget, tail and counters; its encoder is not used
	buf *bytes.Buffer
	je  *json.Encoder
}

func newJSONPage(enc convEncoder) *jsonPage {
	p := newConvPage(enc, 0)
	buf := bytes.NewBuffer(make([]byte, 0, 1<<20))
	buf.WriteString(convPageHead)
	je := json.NewEncoder(buf)
	je.SetEscapeHTML(false)
	return &jsonPage{p: p, buf: buf, je: je}
}

func (j *jsonPage) add(c voiceops.Conversation, turns []voiceops.Turn) bool {
	mark := j.buf.Len()
	if j.p.n > 0 {
		j.buf.WriteByte(',')
	}
	if err := j.je.Encode(v3Record(j.p.enc, c, turns)); err != nil {
		panic(err)
	}
	j.buf.Truncate(j.buf.Len() - 1) // the encoder's newline
	cost := j.p.cost + wireCost(j.buf.Bytes()[mark:])
	if cost > j.p.budget {
		// The first record alone over the budget is cut by convPage; the
		// benchmark's records are far smaller.
		j.buf.Truncate(mark)
		return false
	}
	j.p.cost = cost
	j.p.n++
	return true
}

func (j *jsonPage) count() int { return j.p.n }

func (j *jsonPage) finish(t convTail) []byte {
	return j.p.appendTail(j.buf.Bytes(), t)
}

// The v3 record as an encoding/json user would type it: v3 writes every
// text field as a string ("" for none) and times in voiceops.TimeFormat.
type v3Conversation struct {
	ID                 string         `json:"id"`
	AccountID          string         `json:"account_id"`
	ProjectID          string         `json:"project_id"`
	Environment        string         `json:"environment"`
	StartedAt          string         `json:"started_at"`
	Channel            string         `json:"channel"`
	InProgress         bool           `json:"in_progress"`
	VariantID          string         `json:"variant_id"`
	VariantName        string         `json:"variant_name"`
	FromNumber         string         `json:"from_number"`
	ToNumber           string         `json:"to_number"`
	NumTurns           int            `json:"num_turns"`
	TotalDuration      int64          `json:"total_duration"`
	ServiceDuration    int64          `json:"service_duration"`
	Handoff            bool           `json:"handoff"`
	HandoffReason      string         `json:"handoff_reason"`
	HandoffDestination string         `json:"handoff_destination"`
	NumSilences        int            `json:"num_silences"`
	NumOOD             int            `json:"num_ood"`
	Metrics            v3Metrics      `json:"metrics"`
	State              map[string]any `json:"state"`
	Latency            *refLatency    `json:"latency,omitempty"`
	Turns              []v3Turn       `json:"turns"`
}

type v3Metrics struct {
	CallDuration   string   `json:"CALL_DURATION"`
	CallTurn       []string `json:"CALL_TURN"`
	CallStart      string   `json:"CALL_START"`
	CallEnd        string   `json:"CALL_END"`
	EndReason      string   `json:"END_REASON"`
	FunctionErrors string   `json:"FUNCTION_ERRORS"`
	ASRLang        string   `json:"ASR_LANG"`
	TTSLang        string   `json:"TTS_LANG"`
	// Only when a model answered a turn.
	ModelInputTokens  string `json:"MODEL_INPUT_TOKENS,omitempty"`
	ModelOutputTokens string `json:"MODEL_OUTPUT_TOKENS,omitempty"`
}

type v3Turn struct {
	UserInput             string           `json:"user_input"`
	UserInputDTMF         string           `json:"user_input_dtmf"`
	UserInputDatetime     string           `json:"user_input_datetime"`
	AgentResponse         string           `json:"agent_response"`
	AgentResponseDatetime string           `json:"agent_response_datetime"`
	Latency               float64          `json:"latency"`
	TranslatedUserInput   string           `json:"translated_user_input"`
	EnglishAgentResponse  string           `json:"english_agent_response"`
	Intents               []string         `json:"intents"`
	Entities              []map[string]any `json:"entities"`
	IsOOD                 bool             `json:"is_ood"`
	IsSilence             bool             `json:"is_silence"`
	Metadata              *map[string]any  `json:"metadata,omitempty"`
}

// v3Record is refRecord's v3 shape, typed.
func v3Record(e convEncoder, c voiceops.Conversation, turns []voiceops.Turn) v3Conversation {
	tm := func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.UTC().Format(voiceops.TimeFormat)
	}
	orEmpty := func(m map[string]any) map[string]any {
		if m == nil {
			return map[string]any{}
		}
		return m
	}
	total := wholeSeconds(c.TotalDuration(e.now))
	r := v3Conversation{
		ID: c.ID, AccountID: c.AccountID, ProjectID: c.ProjectID, Environment: string(c.Environment),
		StartedAt: tm(c.StartedAt), Channel: string(c.Channel), InProgress: c.InProgress,
		VariantID: c.VariantID, VariantName: c.VariantName, FromNumber: c.FromNumber, ToNumber: c.ToNumber,
		NumTurns: c.NumTurns, TotalDuration: total, ServiceDuration: wholeSeconds(c.ServiceTime), Handoff: c.Handoff,
		HandoffReason: c.HandoffReason, HandoffDestination: c.HandoffDestination, NumSilences: c.NumSilences,
		NumOOD: c.NumOOD, State: orEmpty(c.State), Turns: make([]v3Turn, 0, len(turns)),
		Metrics: v3Metrics{CallDuration: fmt.Sprint(total), CallTurn: make([]string, 0, len(turns)), CallStart: tm(c.StartedAt),
			EndReason: string(c.EndReason), ASRLang: c.ASRLang, TTSLang: c.TTSLang, FunctionErrors: "0"},
	}
	if c.EndedAt != nil {
		r.Metrics.CallEnd = tm(*c.EndedAt)
	}
	ms := make([]int64, 0, len(turns))
	ferrs := 0
	for _, t := range turns {
		r.Metrics.CallTurn = append(r.Metrics.CallTurn, tm(t.UserInputAt))
		ferrs += t.FunctionErrors
		if t.Model != nil {
			in, _ := strconv.Atoi(r.Metrics.ModelInputTokens)
			out, _ := strconv.Atoi(r.Metrics.ModelOutputTokens)
			r.Metrics.ModelInputTokens, r.Metrics.ModelOutputTokens = strconv.Itoa(in+t.Model.InputTokens), strconv.Itoa(out+t.Model.OutputTokens)
		}
		ms = append(ms, t.Latency.Round(time.Millisecond).Milliseconds())
		rt := v3Turn{UserInput: t.UserInput, UserInputDTMF: t.UserInputDTMF, UserInputDatetime: tm(t.UserInputAt),
			AgentResponse: t.AgentResponse, AgentResponseDatetime: tm(t.AgentResponseAt), Latency: latencySeconds(t.Latency),
			TranslatedUserInput: t.TranslatedUserInput, EnglishAgentResponse: t.EnglishAgentResponse,
			Intents: t.Intents, Entities: t.Entities, IsOOD: t.IsOOD, IsSilence: t.IsSilence}
		if rt.Intents == nil {
			rt.Intents = []string{}
		}
		if rt.Entities == nil {
			rt.Entities = []map[string]any{}
		}
		if e.metadata {
			md := orEmpty(t.Metadata)
			rt.Metadata = &md
		}
		r.Turns = append(r.Turns, rt)
	}
	r.Metrics.FunctionErrors = fmt.Sprint(ferrs)
	if e.latency {
		r.Latency = refLatencyOf(len(turns), ms)
	}
	return r
}

var _ pageWriter = (*jsonPage)(nil)
