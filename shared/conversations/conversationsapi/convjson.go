package conversationsapi

import (
	"github.com/voiceops/opsapi/shared/platform/jsontext"

	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/voiceops/opsapi/shared/voiceops"
)

// This file writes the records of the conversations list (the base host) by
// appending bytes, in the two shapes of the list's versions:
//
//   - v3: every text field is a string ("" when empty), every time is
//     2006-01-02T15:04:05.000Z (UTC, milliseconds), and turns carry
//     latency, translated_user_input and english_agent_response.
//   - v1: an empty text field is null, times keep the legacy form
//     (RFC 3339 in UTC with only the fractional digits needed), and turns
//     carry neither latency nor the translation fields.
//
// The bytes are exactly what encoding/json writes for the same record
// with HTML escaping off (conversations_test.go checks it against a
// reflection-based reference, and BenchmarkConversationPage compares the
// two): a page of 5000 conversations is one allocation-light pass, and
// the page builder (conversations.go) can measure each record as it is
// written, to cut the page at its byte budget.

// convEncoder writes conversation records of one list version.
type convEncoder struct {
	v3 bool
	// latency adds the per-conversation `latency` summary (v3
	// include_latency); metadata adds each turn's `metadata` (v3
	// include_turn_metadata).
	latency, metadata bool
	// now is the time of the request: the total_duration of a
	// conversation in progress runs to it.
	now time.Time
}

// appendHead writes a record from its opening brace up to and including
// `"turns":[`; turns (all of the conversation's) feed metrics and latency.
func (e convEncoder) appendHead(b []byte, c voiceops.Conversation, turns []voiceops.Turn) []byte {
	b = append(b, `{"id":`...)
	b = jsontext.AppendString(b, c.ID)
	b = append(b, `,"account_id":`...)
	b = jsontext.AppendString(b, c.AccountID)
	b = append(b, `,"project_id":`...)
	b = jsontext.AppendString(b, c.ProjectID)
	b = append(b, `,"environment":`...)
	b = e.appendText(b, string(c.Environment))
	b = append(b, `,"started_at":`...)
	b = e.appendTime(b, c.StartedAt)
	b = append(b, `,"channel":`...)
	b = e.appendText(b, string(c.Channel))
	b = append(b, `,"in_progress":`...)
	b = strconv.AppendBool(b, c.InProgress)
	b = append(b, `,"variant_id":`...)
	b = e.appendText(b, c.VariantID)
	b = append(b, `,"variant_name":`...)
	b = e.appendText(b, c.VariantName)
	b = append(b, `,"from_number":`...)
	b = e.appendText(b, c.FromNumber)
	b = append(b, `,"to_number":`...)
	b = e.appendText(b, c.ToNumber)
	b = append(b, `,"num_turns":`...)
	b = strconv.AppendInt(b, int64(c.NumTurns), 10)
	total := wholeSeconds(c.TotalDuration(e.now))
	b = append(b, `,"total_duration":`...)
	b = strconv.AppendInt(b, total, 10)
	b = append(b, `,"service_duration":`...)
	b = strconv.AppendInt(b, wholeSeconds(c.ServiceTime), 10)
	b = append(b, `,"handoff":`...)
	b = strconv.AppendBool(b, c.Handoff)
	b = append(b, `,"handoff_reason":`...)
	b = e.appendText(b, c.HandoffReason)
	b = append(b, `,"handoff_destination":`...)
	b = e.appendText(b, c.HandoffDestination)
	b = append(b, `,"num_silences":`...)
	b = strconv.AppendInt(b, int64(c.NumSilences), 10)
	b = append(b, `,"num_ood":`...)
	b = strconv.AppendInt(b, int64(c.NumOOD), 10)
	b = append(b, `,"metrics":`...)
	b = e.appendMetrics(b, c, turns, total)
	b = append(b, `,"state":`...)
	b = appendObject(b, c.State)
	if e.v3 && e.latency {
		b = append(b, `,"latency":`...)
		b = appendLatency(b, turns)
	}
	return append(b, `,"turns":[`...)
}

// appendTurn writes one turn object.
func (e convEncoder) appendTurn(b []byte, t voiceops.Turn) []byte {
	b = append(b, `{"user_input":`...)
	b = e.appendText(b, t.UserInput)
	b = append(b, `,"user_input_dtmf":`...)
	b = e.appendText(b, t.UserInputDTMF)
	b = append(b, `,"user_input_datetime":`...)
	b = e.appendTime(b, t.UserInputAt)
	b = append(b, `,"agent_response":`...)
	b = e.appendText(b, t.AgentResponse)
	b = append(b, `,"agent_response_datetime":`...)
	b = e.appendTime(b, t.AgentResponseAt)
	if e.v3 {
		b = append(b, `,"latency":`...)
		b = jsontext.AppendFloat(b, latencySeconds(t.Latency))
		b = append(b, `,"translated_user_input":`...)
		b = jsontext.AppendString(b, t.TranslatedUserInput)
		b = append(b, `,"english_agent_response":`...)
		b = jsontext.AppendString(b, t.EnglishAgentResponse)
	}
	b = append(b, `,"intents":[`...)
	for i, s := range t.Intents {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsontext.AppendString(b, s)
	}
	b = append(b, `],"entities":[`...)
	for i, m := range t.Entities {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendObject(b, m)
	}
	b = append(b, `],"is_ood":`...)
	b = strconv.AppendBool(b, t.IsOOD)
	b = append(b, `,"is_silence":`...)
	b = strconv.AppendBool(b, t.IsSilence)
	if e.v3 && e.metadata {
		b = append(b, `,"metadata":`...)
		b = appendObject(b, t.Metadata)
		if t.Model != nil {
			b = appendModel(b, t.Model)
		}
	}
	return append(b, '}')
}

// appendModel writes a model-backed turn's `model` (include_turn_metadata):
// what the model cost and did in the turn.
func appendModel(b []byte, m *voiceops.TurnModel) []byte {
	b = append(b, `,"model":{"model_id":`...)
	b = jsontext.AppendString(b, m.ModelID)
	b = append(b, `,"input_tokens":`...)
	b = strconv.AppendInt(b, int64(m.InputTokens), 10)
	b = append(b, `,"output_tokens":`...)
	b = strconv.AppendInt(b, int64(m.OutputTokens), 10)
	b = append(b, `,"stop_reason":`...)
	b = jsontext.AppendString(b, m.StopReason)
	b = append(b, `,"model_latency_ms":`...)
	b = strconv.AppendInt(b, m.ModelLatency.Milliseconds(), 10)
	b = append(b, `,"tool_calls":[`...)
	for i, c := range m.ToolCalls {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"name":`...)
		b = jsontext.AppendString(b, c.Name)
		b = append(b, `,"outcome":`...)
		b = jsontext.AppendString(b, c.Outcome)
		b = append(b, `,"duration_ms":`...)
		b = strconv.AppendInt(b, c.Duration.Milliseconds(), 10)
		b = append(b, '}')
	}
	b = append(b, `],"guardrail_action":`...)
	b = jsontext.AppendString(b, m.GuardrailAction)
	return append(b, '}')
}

// recordTail closes a record opened by appendHead.
const recordTail = "]}"

// appendRecord writes a whole record.
func (e convEncoder) appendRecord(b []byte, c voiceops.Conversation, turns []voiceops.Turn) []byte {
	b = e.appendHead(b, c, turns)
	for i, t := range turns {
		if i > 0 {
			b = append(b, ',')
		}
		b = e.appendTurn(b, t)
	}
	return append(b, recordTail...)
}

// appendMetrics writes the `metrics` object. Its keys (documented in the
// OpenAPI document): CALL_DURATION (total_duration as a string),
// CALL_TURN (one timestamp per turn: when the user's input arrived),
// CALL_START, CALL_END (empty/null while in progress), END_REASON
// (completed, closed, handoff, crashed, timeout; empty/null while in progress),
// FUNCTION_ERRORS (project functions that failed, over all turns, as a
// string), ASR_LANG and TTS_LANG (language codes, empty/null when not
// set), MODEL_INPUT_TOKENS and MODEL_OUTPUT_TOKENS (a Bedrock agent's
// tokens over all turns, as strings; only when a model answered a turn);
// then the metrics project functions logged, in the order of their
// first value: a string, or an array of strings for a name logged more
// than once. Every value is a string or an array of strings (the
// vendor's shape).
func (e convEncoder) appendMetrics(b []byte, c voiceops.Conversation, turns []voiceops.Turn, total int64) []byte {
	b = append(b, `{"CALL_DURATION":"`...)
	b = strconv.AppendInt(b, total, 10)
	b = append(b, `","CALL_TURN":[`...)
	ferrs, inTokens, outTokens, modelTurns := 0, 0, 0, 0
	for i, t := range turns {
		if i > 0 {
			b = append(b, ',')
		}
		b = e.appendTime(b, t.UserInputAt)
		ferrs += t.FunctionErrors
		if t.Model != nil {
			modelTurns++
			inTokens, outTokens = inTokens+t.Model.InputTokens, outTokens+t.Model.OutputTokens
		}
	}
	b = append(b, `],"CALL_START":`...)
	b = e.appendTime(b, c.StartedAt)
	b = append(b, `,"CALL_END":`...)
	if c.EndedAt != nil {
		b = e.appendTime(b, *c.EndedAt)
	} else {
		b = e.appendText(b, "")
	}
	b = append(b, `,"END_REASON":`...)
	b = e.appendText(b, string(c.EndReason))
	b = append(b, `,"FUNCTION_ERRORS":"`...)
	b = strconv.AppendInt(b, int64(ferrs), 10)
	b = append(b, `","ASR_LANG":`...)
	b = e.appendText(b, c.ASRLang)
	b = append(b, `,"TTS_LANG":`...)
	b = e.appendText(b, c.TTSLang)
	if modelTurns > 0 { // only conversations a model answered: the keys are the cost model's
		b = append(b, `,"MODEL_INPUT_TOKENS":"`...)
		b = strconv.AppendInt(b, int64(inTokens), 10)
		b = append(b, `","MODEL_OUTPUT_TOKENS":"`...)
		b = strconv.AppendInt(b, int64(outTokens), 10)
		b = append(b, '"')
	}
	b = appendCustomMetrics(b, c.Metrics)
	return append(b, '}')
}

// appendCustomMetrics writes the logged metrics after the built-in keys:
// each name once, at its first value's place.
func appendCustomMetrics(b []byte, ms []voiceops.CustomMetric) []byte {
	for i, m := range ms {
		if slices.ContainsFunc(ms[:i], func(o voiceops.CustomMetric) bool { return o.Name == m.Name }) {
			continue // written with its first value
		}
		b = append(b, ',')
		b = jsontext.AppendString(b, m.Name)
		b = append(b, ':')
		n := 0
		for _, o := range ms[i:] {
			if o.Name == m.Name {
				n++
			}
		}
		if n == 1 {
			b = jsontext.AppendString(b, m.Value)
			continue
		}
		b = append(b, '[')
		first := true
		for _, o := range ms[i:] {
			if o.Name != m.Name {
				continue
			}
			if !first {
				b = append(b, ',')
			}
			first = false
			b = jsontext.AppendString(b, o.Value)
		}
		b = append(b, ']')
	}
	return b
}

// appendLatency writes the v3 include_latency summary of a conversation's
// turn latencies, in integer milliseconds (the unit of the alert rules'
// latency metrics): {"turns", "avg_ms", "p50_ms", "p95_ms", "max_ms"},
// the statistics null when there are no turns. Percentiles are nearest
// rank over the exact turn latencies.
func appendLatency(b []byte, turns []voiceops.Turn) []byte {
	b = append(b, `{"turns":`...)
	b = strconv.AppendInt(b, int64(len(turns)), 10)
	if len(turns) == 0 {
		return append(b, `,"avg_ms":null,"p50_ms":null,"p95_ms":null,"max_ms":null}`...)
	}
	ms := make([]int64, len(turns))
	var sum int64
	for i, t := range turns {
		ms[i] = t.Latency.Round(time.Millisecond).Milliseconds()
		sum += ms[i]
	}
	slices.Sort(ms)
	rank := func(p float64) int64 { return ms[max(int(math.Ceil(p*float64(len(ms))))-1, 0)] }
	b = append(b, `,"avg_ms":`...)
	b = strconv.AppendInt(b, int64(math.Round(float64(sum)/float64(len(ms)))), 10)
	b = append(b, `,"p50_ms":`...)
	b = strconv.AppendInt(b, rank(0.50), 10)
	b = append(b, `,"p95_ms":`...)
	b = strconv.AppendInt(b, rank(0.95), 10)
	b = append(b, `,"max_ms":`...)
	b = strconv.AppendInt(b, ms[len(ms)-1], 10)
	return append(b, '}')
}

// wholeSeconds rounds a duration to whole seconds, half up (docs/conversations.md:
// total_duration and service_duration are integer seconds).
func wholeSeconds(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return int64((d + time.Second/2) / time.Second)
}

// latencySeconds is a turn's latency in seconds, to the millisecond.
func latencySeconds(d time.Duration) float64 {
	return float64(d.Round(time.Millisecond).Milliseconds()) / 1000
}

// appendText writes a text field: v3 writes "" for an empty one, v1 null.
func (e convEncoder) appendText(b []byte, s string) []byte {
	if s == "" && !e.v3 {
		return append(b, "null"...)
	}
	return jsontext.AppendString(b, s)
}

// appendTime writes a time in the version's form; the zero time is an
// empty text field.
func (e convEncoder) appendTime(b []byte, t time.Time) []byte {
	if t.IsZero() {
		return e.appendText(b, "")
	}
	b = append(b, '"')
	if e.v3 {
		b = t.UTC().AppendFormat(b, voiceops.TimeFormat)
	} else {
		b = t.UTC().AppendFormat(b, time.RFC3339Nano)
	}
	return append(b, '"')
}

// appendObject writes a free-form object (state, entities, metadata); nil
// is {}.
func appendObject(b []byte, m map[string]any) []byte {
	if m == nil {
		return append(b, "{}"...)
	}
	return appendValue(b, m)
}

// appendValue writes a JSON value as encoding/json does (map keys sorted).
// The stores give back decoded JSON (nil, bool, float64, string, []any,
// map[string]any); anything else goes through encoding/json.
func appendValue(b []byte, v any) []byte {
	switch v := v.(type) {
	case nil:
		return append(b, "null"...)
	case bool:
		return strconv.AppendBool(b, v)
	case string:
		return jsontext.AppendString(b, v)
	case float64:
		return jsontext.AppendFloat(b, v)
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsontext.AppendString(b, k)
			b = append(b, ':')
			b = appendValue(b, v[k])
		}
		return append(b, '}')
	case []any:
		b = append(b, '[')
		for i, x := range v {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendValue(b, x)
		}
		return append(b, ']')
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return append(b, "null"...) // not JSON-representable (NaN, a channel): never stored
	}
	return append(b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
}

// wireCost is the size of JSON bytes once carried as the body string of
// the Lambda response to API Gateway: the runtime's JSON encoder (HTML
// escaping off, the aws-lambda-go default) escapes each quote and
// backslash with one more byte. The body is valid UTF-8, so it is never
// base64-encoded.
func wireCost(b []byte) int {
	return len(b) + bytes.Count(b, []byte{'"'}) + bytes.Count(b, []byte{'\\'})
}

// convDescriptions is the v1 `descriptions.conversations` object: every
// key of a v1 record, of its turns (`turns[].key`) and of its metrics
// (`metrics.KEY`), with what it holds.
var convDescriptions = []struct{ key, text string }{
	{"id", "Conversation ID."},
	{"account_id", "Account the conversation belongs to."},
	{"project_id", "Project the conversation belongs to."},
	{"environment", "Environment of the agent that handled it: sandbox, pre-release or live."},
	{"started_at", "When the conversation started (UTC)."},
	{"channel", "How it happened: voice, webchat, whatsapp, sms or api."},
	{"in_progress", "True while the conversation has not ended."},
	{"variant_id", "ID of the agent variant that handled it."},
	{"variant_name", "Name of the agent variant that handled it."},
	{"from_number", "Caller's number (voice); null when unknown."},
	{"to_number", "Number called (voice); null when unknown."},
	{"num_turns", "Number of turns, the agent's greeting included."},
	{"total_duration", "Length of the conversation in whole seconds (so far, while in progress)."},
	{"service_duration", "Time the agent and the project's functions spent answering, in whole seconds."},
	{"handoff", "True when the conversation was handed off."},
	{"handoff_reason", "Why it was handed off; null without a handoff."},
	{"handoff_destination", "Where it was handed off to; null without a handoff."},
	{"num_silences", "Turns in which the user said nothing."},
	{"num_ood", "Turns the agent could not map to anything it handles (out of domain)."},
	{"metrics", "Conversation metrics; see the metrics.* keys."},
	{"metrics.CALL_DURATION", "total_duration as a string of whole seconds."},
	{"metrics.CALL_TURN", "One timestamp per turn: when the user's input arrived."},
	{"metrics.CALL_START", "When the conversation started."},
	{"metrics.CALL_END", "When it ended; null while in progress."},
	{"metrics.END_REASON", "How it ended (completed, closed, handoff, crashed, timeout: idle past the idle timeout); null while in progress."},
	{"metrics.FUNCTION_ERRORS", "Project functions that failed during the conversation, as a string."},
	{"metrics.ASR_LANG", "Speech recognition language code; null when not set."},
	{"metrics.TTS_LANG", "Speech synthesis language code; null when not set."},
	{"metrics.MODEL_INPUT_TOKENS", "A Bedrock agent's input tokens over all turns, as a string; absent when no model answered."},
	{"metrics.MODEL_OUTPUT_TOKENS", "A Bedrock agent's output tokens over all turns, as a string; absent when no model answered."},
	{"state", "The agent's and the project functions' memory of the conversation."},
	{"turns", "The turns, in order."},
	{"turns[].user_input", "What the user said or wrote; null for a silence or DTMF only."},
	{"turns[].user_input_dtmf", "Keys the user pressed; null when none."},
	{"turns[].user_input_datetime", "When the user's input arrived."},
	{"turns[].agent_response", "What the agent answered."},
	{"turns[].agent_response_datetime", "When the agent answered."},
	{"turns[].intents", "Intents the agent recognised."},
	{"turns[].entities", "Entities the agent extracted."},
	{"turns[].is_ood", "True when the turn was out of domain."},
	{"turns[].is_silence", "True when the user said nothing."},
}

// descriptionsJSON is `"descriptions":{...}` of the v1 list, written once.
var descriptionsJSON = func() []byte {
	b := []byte(`"descriptions":{"conversations":{`)
	for i, d := range convDescriptions {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsontext.AppendString(b, d.key)
		b = append(b, ':')
		b = jsontext.AppendString(b, d.text)
	}
	return append(b, "}}"...)
}()
