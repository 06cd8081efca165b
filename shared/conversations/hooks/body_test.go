package hooks

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/voiceops"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// testConversation is a chat conversation with state and integration
// attributes.
func testConversation() voiceops.Conversation {
	return voiceops.Conversation{
		ID: "conv_1", AccountID: "acct_1", ProjectID: "proj_1",
		Environment: voiceops.EnvLive, Channel: voiceops.ChannelWebchat,
		VariantID: "var_a", VariantName: "A",
		FromNumber: "+441234567890", ToNumber: "+442000000000",
		IntegrationAttributes: map[string]any{"crm_id": "c-42", "vip": true},
		State:                 map[string]any{"step": "billing", "tries": 2},
		StartedAt:             time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC),
		InProgress:            true,
	}
}

func testTurn() *voiceops.Turn {
	return &voiceops.Turn{
		Index: 1, UserInput: "I want <my> bill & more", UserInputDTMF: "12#",
		Metadata: map[string]any{"page": "/billing"},
		IsOOD:    true, // not sent
	}
}

// TestRequestGolden pins the body a function receives.
func TestRequestGolden(t *testing.T) {
	bare := voiceops.Conversation{ID: "conv_2", Channel: voiceops.ChannelVoice}
	tests := []struct {
		name string
		call Call
	}{
		{"on_turn", Call{Hook: "on_turn", Conversation: testConversation(), Turn: testTurn()}},
		{"on_start_bare", Call{Hook: "on_start", Conversation: bare}},
		{"silence_turn", Call{Hook: "on_turn", Conversation: bare, Turn: &voiceops.Turn{IsSilence: true, Metadata: map[string]any{}}}},
		{"on_bridge_ended", Call{Hook: "on_bridge_ended", Conversation: testConversation(),
			Extra: map[string]any{"bridge_duration_seconds": 42.5, "call_duration_seconds": 90}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body, err := encodeRequest(tt.call)
			if err != nil {
				t.Fatal(err)
			}
			var pretty bytes.Buffer
			if err := json.Indent(&pretty, body, "", "  "); err != nil {
				t.Fatal(err)
			}
			pretty.WriteByte('\n')
			path := filepath.Join("testdata", "request_"+tt.name+".json")
			if *update {
				if err := os.WriteFile(path, pretty.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !bytes.Equal(pretty.Bytes(), want) {
				t.Errorf("body differs from %s:\n%s", path, pretty.Bytes())
			}
		})
	}
}

func TestEncodeRequestUnencodable(t *testing.T) {
	_, err := encodeRequest(Call{Hook: "on_turn", Extra: map[string]any{"f": func() {}}})
	if err == nil {
		t.Fatal("a func value was encoded")
	}
}

func ptr[T any](v T) *T { return &v }

func TestParseAnswer(t *testing.T) {
	tests := []struct {
		name   string
		answer string
		want   Result
	}{
		{"empty", "", Result{}},
		{"white space", " \n\t", Result{}},
		{"null", "null", Result{}},
		{"empty object", "{}", Result{}},
		{"all null", `{"state":null,"response":null,"end":null,"handoff":null,"outbound_caller_id":null,"outbound_endpoint":null}`, Result{}},
		{"state, override, end", `{"state":{"paid":true,"n":3,"tags":["a"],"gone":null},"response":"Bye <now>","end":true}`,
			Result{State: map[string]any{"paid": true, "n": 3.0, "tags": []any{"a"}, "gone": nil}, Response: ptr("Bye <now>"), End: true}},
		{"empty override", `{"response":""}`, Result{Response: ptr("")}},
		{"end false", `{"end":false}`, Result{}},
		{"plain handoff", `{"handoff":{"destination":"sales","reason":"asked for a human"}}`,
			Result{Handoff: &Handoff{Destination: "sales", Reason: "asked for a human"}}},
		{"plain handoff, no reason", `{"handoff":{"destination":"sales","reason":null}}`,
			Result{Handoff: &Handoff{Destination: "sales"}}},
		{"custom SIP handoff", `{"handoff": true, "outbound_caller_id": "+441234567890", "outbound_endpoint": "pbx-main"}`,
			Result{Handoff: &Handoff{Destination: "pbx-main", SIP: &SIP{OutboundCallerID: "+441234567890", OutboundEndpoint: "pbx-main"}}}},
		{"SIP handoff, no caller ID", `{"handoff":true,"outbound_endpoint":"pbx-main","response":"Transferring you"}`,
			Result{Response: ptr("Transferring you"), Handoff: &Handoff{Destination: "pbx-main", SIP: &SIP{OutboundEndpoint: "pbx-main"}}}},
		{"handoff false, empty SIP fields", `{"handoff":false,"outbound_caller_id":"","outbound_endpoint":""}`, Result{}},
		{"unicode", `{"response":"caf\u00e9 \ud83d\ude00"}`, Result{Response: ptr("café 😀")}},
		{"metrics", `{"metrics":{"ORDER_ID":"A-17","tags":["vip","null"],"empty":[],"x.y-z":""}}`,
			Result{Metrics: []voiceops.CustomMetric{{Name: "ORDER_ID", Value: "A-17"}, {Name: "tags", Value: "vip"}, {Name: "tags", Value: "null"}, {Name: "x.y-z", Value: ""}}}},
		{"metrics null", `{"metrics":null}`, Result{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseAnswer([]byte(tt.answer))
			if err != nil {
				t.Fatalf("error %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %#v\nwant %#v", got, tt.want)
			}
		})
	}
}

func TestParseAnswerRefuses(t *testing.T) {
	tests := []struct{ name, answer string }{
		{"not JSON", "<html>oops</html>"},
		{"text", "OK"},
		{"truncated", `{"state":{"a":1}`},
		{"array", `[{"end":true}]`},
		{"string", `"end"`},
		{"number", `42`},
		{"trailing data", `{"end":true} x`},
		{"two objects", `{} {}`},
		{"metrics not an object", `{"metrics":["a"]}`},
		{"metric number", `{"metrics":{"N":3}}`},
		{"metric null element", `{"metrics":{"N":["a",null]}}`},
		{"metric nested", `{"metrics":{"N":[["a"]]}}`},
		{"metric built-in name", `{"metrics":{"FUNCTION_ERRORS":"0"}}`},
		{"metric bad name", `{"metrics":{"a b":"x"}}`},
		{"metric empty name", `{"metrics":{"":"x"}}`},
		{"metric name repeated", `{"metrics":{"A":"x","A":"y"}}`},
		{"metric value too long", `{"metrics":{"A":"` + strings.Repeat("x", 257) + `"}}`},
		{"too many metrics", `{"metrics":{"A":[` + strings.TrimSuffix(strings.Repeat(`"x",`, 33), ",") + `]}}`},
		{"null then data", `null {}`},
		{"unknown key", `{"end":true,"respone":"typo"}`},
		{"key in another case", `{"End":true}`},
		{"repeated key", `{"end":true,"end":false}`},
		{"state not object", `{"state":[1,2]}`},
		{"state string", `{"state":"a=1"}`},
		{"response number", `{"response":42}`},
		{"response object", `{"response":{"text":"hi"}}`},
		{"end string", `{"end":"true"}`},
		{"end number", `{"end":1}`},
		{"handoff string", `{"handoff":"sales"}`},
		{"handoff number", `{"handoff":1}`},
		{"handoff array", `{"handoff":["sales"]}`},
		{"handoff without destination", `{"handoff":{"reason":"x"}}`},
		{"handoff empty destination", `{"handoff":{"destination":""}}`},
		{"handoff destination number", `{"handoff":{"destination":7}}`},
		{"handoff reason bool", `{"handoff":{"destination":"sales","reason":true}}`},
		{"handoff unknown key", `{"handoff":{"destination":"sales","queue":"q1"}}`},
		{"handoff key case", `{"handoff":{"Destination":"sales"}}`},
		{"handoff repeated key", `{"handoff":{"destination":"a","destination":"b"}}`},
		{"SIP without endpoint", `{"handoff":true,"outbound_caller_id":"+44"}`},
		{"SIP empty endpoint", `{"handoff":true,"outbound_endpoint":""}`},
		{"SIP endpoint number", `{"handoff":true,"outbound_endpoint":5}`},
		{"SIP caller ID number", `{"handoff":true,"outbound_endpoint":"pbx","outbound_caller_id":441234}`},
		{"SIP fields without handoff", `{"outbound_endpoint":"pbx"}`},
		{"SIP fields with handoff false", `{"handoff":false,"outbound_endpoint":"pbx"}`},
		{"SIP fields with plain handoff", `{"handoff":{"destination":"sales"},"outbound_endpoint":"pbx"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseAnswer([]byte(tt.answer))
			if err == nil {
				t.Fatalf("accepted as %#v", got)
			}
			if !reflect.DeepEqual(got, Result{}) {
				t.Errorf("result %#v with the error", got)
			}
			// The error names our keys only, never the answer's content.
			for _, secret := range []string{"oops", "typo", "respone", "a=1", "sales", "pbx", "queue", "+44"} {
				if strings.Contains(tt.answer, secret) && strings.Contains(err.Error(), secret) {
					t.Errorf("error %q quotes the answer", err)
				}
			}
		})
	}
}

// FuzzParseAnswer: any answer is parsed or refused without a panic, and an
// accepted answer respects the Result's invariants.
func FuzzParseAnswer(f *testing.F) {
	for _, s := range []string{
		"", "null", "{}", `{"state":{"a":1},"response":"x","end":true}`,
		`{"handoff":{"destination":"d","reason":"r"}}`,
		`{"handoff":true,"outbound_caller_id":"c","outbound_endpoint":"e"}`,
		`{"handoff":false}`, `[1]`, `{"end":true}x`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		res, err := ParseAnswer(data)
		if err != nil {
			if !reflect.DeepEqual(res, Result{}) {
				t.Fatalf("result %#v with error %v", res, err)
			}
			return
		}
		if !json.Valid(data) && len(bytes.Trim(data, " \t\r\n")) > 0 {
			t.Fatalf("accepted invalid JSON %q", data)
		}
		if h := res.Handoff; h != nil {
			if h.Destination == "" {
				t.Fatalf("handoff without destination from %q", data)
			}
			if h.SIP != nil && (h.SIP.OutboundEndpoint == "" || h.Destination != h.SIP.OutboundEndpoint) {
				t.Fatalf("SIP handoff %#v from %q", h.SIP, data)
			}
		}
	})
}
