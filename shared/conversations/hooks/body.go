package hooks

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"slices"

	"github.com/voiceops/opsapi/shared/voiceops"
)

// MaxAnswer is the largest answer read from a function, in bytes. A larger
// answer is a KindBadAnswer error, never parsed truncated.
const MaxAnswer = 64 << 10

// request is the body sent to a function, over HTTPS or as the Lambda
// payload.
type request struct {
	Hook  string         `json:"hook"`
	Conv  convBody       `json:"conv"`
	Turn  *turnBody      `json:"turn"`  // null outside a turn
	Extra map[string]any `json:"extra"` // {} when none
}

type convBody struct {
	ID    string         `json:"id"`
	State map[string]any `json:"state"` // {} when empty
	// IntegrationAttributes is null when none were given (the vendor's interface: "may be
	// null or absent").
	IntegrationAttributes map[string]any   `json:"integration_attributes"`
	VariantID             string           `json:"variant_id"`
	Channel               voiceops.Channel `json:"channel"`
	FromNumber            string           `json:"from_number"`
	ToNumber              string           `json:"to_number"`
}

type turnBody struct {
	UserInput     string         `json:"user_input"`
	UserInputDTMF string         `json:"user_input_dtmf"`
	IsSilence     bool           `json:"is_silence"`
	Metadata      map[string]any `json:"metadata"` // null when none
}

// encodeRequest returns the JSON body of c, without HTML escaping (the
// function gets the user's text byte for byte).
func encodeRequest(c Call) ([]byte, error) {
	conv := c.Conversation
	req := request{
		Hook: c.Hook,
		Conv: convBody{
			ID:                    conv.ID,
			State:                 orEmpty(conv.State),
			IntegrationAttributes: orNil(conv.IntegrationAttributes),
			VariantID:             conv.VariantID,
			Channel:               conv.Channel,
			FromNumber:            conv.FromNumber,
			ToNumber:              conv.ToNumber,
		},
		Extra: orEmpty(c.Extra),
	}
	if t := c.Turn; t != nil {
		req.Turn = &turnBody{
			UserInput:     t.UserInput,
			UserInputDTMF: t.UserInputDTMF,
			IsSilence:     t.IsSilence,
			Metadata:      orNil(t.Metadata),
		}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(req); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

func orEmpty(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

func orNil(m map[string]any) map[string]any {
	if len(m) == 0 {
		return nil
	}
	return m
}

// answerError is a parse failure; its text names only our own field names,
// never the answer's content.
type answerError string

func (e answerError) Error() string { return string(e) }

// Answer keys. Keys match exactly (encoding/json alone would also accept
// "State" or "STATE").
const (
	keyState            = "state"
	keyResponse         = "response"
	keyEnd              = "end"
	keyHandoff          = "handoff"
	keyOutboundCallerID = "outbound_caller_id"
	keyOutboundEndpoint = "outbound_endpoint"
	keyMetrics          = "metrics"
)

// ParseAnswer parses a function's answer:
//
//	{"state": {...}, "response": "...", "end": true,
//	 "handoff": {"destination": "...", "reason": "..."},
//	 "metrics": {"NAME": "value", "OTHER": ["a", "b"]}}
//
// or, for the vendor interface's custom SIP handoff return value,
//
//	{"handoff": true, "outbound_caller_id": "...", "outbound_endpoint": "..."}
//
// Every key is optional, and null means absent; an empty answer or null asks
// for nothing. Parsing is strict: unknown or repeated keys, wrong types,
// "handoff": true without an outbound endpoint, outbound fields without
// "handoff": true, and anything after the object are errors. The error never
// quotes the answer.
func ParseAnswer(data []byte) (Result, error) {
	res, err := parseAnswer(data)
	if err != nil {
		return Result{}, err
	}
	return res, nil
}

func parseAnswer(data []byte) (Result, error) {
	var res Result
	if len(trimJSONSpace(data)) == 0 {
		return res, nil
	}
	if bytes.Equal(trimJSONSpace(data), []byte("null")) {
		return res, nil
	}
	raw, err := objectFields(data, "answer",
		keyState, keyResponse, keyEnd, keyHandoff, keyOutboundCallerID, keyOutboundEndpoint, keyMetrics)
	if err != nil {
		return res, err
	}
	if v, ok := raw[keyMetrics]; ok {
		if res.Metrics, err = parseMetrics(v); err != nil {
			return res, err
		}
	}

	if v, ok := raw[keyState]; ok {
		if v[0] != '{' {
			return res, answerError(`"state" must be an object`)
		}
		if err := json.Unmarshal(v, &res.State); err != nil {
			return res, answerError(`"state" must be an object`)
		}
	}
	if v, ok := raw[keyResponse]; ok {
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return res, answerError(`"response" must be a string`)
		}
		res.Response = &s
	}
	if v, ok := raw[keyEnd]; ok {
		if err := json.Unmarshal(v, &res.End); err != nil {
			return res, answerError(`"end" must be a boolean`)
		}
	}
	var callerID, endpoint string
	for _, f := range []struct {
		key string
		dst *string
	}{{keyOutboundCallerID, &callerID}, {keyOutboundEndpoint, &endpoint}} {
		if v, ok := raw[f.key]; ok {
			if err := json.Unmarshal(v, f.dst); err != nil {
				return res, answerError(`"` + f.key + `" must be a string`)
			}
		}
	}
	sip := false
	if v, ok := raw[keyHandoff]; ok {
		switch v[0] {
		case 't', 'f':
			if err := json.Unmarshal(v, &sip); err != nil {
				return res, answerError(`"handoff" must be a boolean or an object`)
			}
		case '{':
			h, err := parsePlainHandoff(v)
			if err != nil {
				return res, err
			}
			res.Handoff = h
		default:
			return res, answerError(`"handoff" must be a boolean or an object`)
		}
	}
	switch {
	case sip && endpoint == "":
		return res, answerError(`"handoff": true needs "outbound_endpoint"`)
	case sip:
		res.Handoff = &Handoff{
			Destination: endpoint,
			SIP:         &SIP{OutboundCallerID: callerID, OutboundEndpoint: endpoint},
		}
	case callerID != "" || endpoint != "":
		return res, answerError(`"outbound_caller_id" and "outbound_endpoint" need "handoff": true`)
	}
	return res, nil
}

// parseMetrics parses an answer's "metrics": an object of names
// (voiceops.ValidCustomMetricName) to a string or an array of strings
// (each at most voiceops.MaxCustomMetricValue bytes), at most
// voiceops.MaxCustomMetricsPerAnswer values in all. Numbers and booleans
// are not converted: a metric is text, as in the conversations list.
func parseMetrics(v json.RawMessage) ([]voiceops.CustomMetric, error) {
	if v[0] != '{' {
		return nil, answerError(`"metrics" must be an object`)
	}
	dec := json.NewDecoder(bytes.NewReader(v))
	_, _ = dec.Token() // the opening brace, checked above
	var out []voiceops.CustomMetric
	seen := map[string]bool{}
	add := func(name, value string) error {
		if len(value) > voiceops.MaxCustomMetricValue {
			return answerError(`"metrics" values must be at most 256 bytes`)
		}
		if len(out) == voiceops.MaxCustomMetricsPerAnswer {
			return answerError(`"metrics" has more than 32 values`)
		}
		out = append(out, voiceops.CustomMetric{Name: name, Value: value})
		return nil
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, answerError(`"metrics" is not JSON`)
		}
		name, _ := tok.(string)
		if !voiceops.ValidCustomMetricName(name) {
			return nil, answerError(`"metrics" names must be 1 to 64 of A-Z a-z 0-9 _ . - and not a built-in key`)
		}
		if seen[name] {
			return nil, answerError(`"metrics" repeats a name`)
		}
		seen[name] = true
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, answerError(`"metrics" is not JSON`)
		}
		var many []*string // a null element stays nil: refused
		if raw[0] == '"' {
			raw = append(append([]byte{'['}, raw...), ']')
		}
		if raw[0] != '[' || json.Unmarshal(raw, &many) != nil || slices.Contains(many, nil) {
			return nil, answerError(`"metrics" values must be strings or arrays of strings`)
		}
		for _, s := range many {
			if err := add(name, *s); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// parsePlainHandoff parses {"destination": "...", "reason": "..."}, with the
// same strictness as the answer.
func parsePlainHandoff(v json.RawMessage) (*Handoff, error) {
	raw, err := objectFields(v, `"handoff"`, "destination", "reason")
	if err != nil {
		return nil, err
	}
	var h Handoff
	if v, ok := raw["destination"]; ok {
		if err := json.Unmarshal(v, &h.Destination); err != nil {
			return nil, answerError(`"handoff.destination" must be a string`)
		}
	}
	if h.Destination == "" {
		return nil, answerError(`"handoff" needs a "destination"`)
	}
	if v, ok := raw["reason"]; ok {
		if err := json.Unmarshal(v, &h.Reason); err != nil {
			return nil, answerError(`"handoff.reason" must be a string`)
		}
	}
	return &h, nil
}

// objectFields reads data as exactly one JSON object whose keys are among
// allowed, spelled exactly, each at most once. It returns each key's raw
// value, leaving out null values. what names the object in errors.
func objectFields(data []byte, what string, allowed ...string) (map[string]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	notJSON := answerError(what + " is not JSON")
	tok, err := dec.Token()
	if err != nil {
		return nil, notJSON
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, answerError(what + " is not a JSON object")
	}
	raw := map[string]json.RawMessage{}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, notJSON
		}
		key, _ := tok.(string) // inside an object, Token gives keys as strings
		if !slices.Contains(allowed, key) {
			return nil, answerError(what + " has an unknown key")
		}
		if seen[key] {
			return nil, answerError(what + " repeats the key " + key)
		}
		seen[key] = true
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, notJSON
		}
		if v = trimJSONSpace(v); !bytes.Equal(v, []byte("null")) {
			raw[key] = v
		}
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return nil, notJSON
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, answerError(what + " has data after the JSON object")
	}
	return raw, nil
}

// trimJSONSpace trims JSON's four whitespace bytes only: bytes.TrimSpace also
// trims \v, \f and Unicode spaces, which would let "null\v" pass as null.
func trimJSONSpace(b []byte) []byte { return bytes.Trim(b, " \t\r\n") }
