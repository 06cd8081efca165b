package bedrockstandin_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/voiceops/opsapi/shared/conversations/agent/bedrockstandin"
)

const sigAuth = "AWS4-HMAC-SHA256 Credential=AKID/20261128/us-east-1/bedrock/aws4_request, SignedHeaders=host;x-amz-date, Signature=" +
	"0000000000000000000000000000000000000000000000000000000000000000"

func post(t *testing.T, s *bedrockstandin.Server, path, auth, body string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
	if auth != "" {
		r.Header.Set("Authorization", auth)
		r.Header.Set("X-Amz-Date", "20261128T110000Z")
	}
	w := httptest.NewRecorder()
	s.ServeHTTP(w, r)
	return w
}

// TestStandinRefuses: what Bedrock refuses, the stand-in refuses, with
// the error type in x-amzn-ErrorType.
func TestStandinRefuses(t *testing.T) {
	user := `{"messages": [{"role": "user", "content": [{"text": "hi"}]}]}`
	for _, tt := range []struct {
		name, path, auth, body, errType string
		status                          int
	}{
		{"unsigned", "/model/m/converse", "", user, "InvalidSignatureException", 403},
		{"other operation", "/model/m/invoke", sigAuth, user, "UnknownOperationException", 404},
		{"no messages", "/model/m/converse", sigAuth, `{}`, "ValidationException", 400},
		{"assistant first", "/model/m/converse", sigAuth, `{"messages": [{"role": "assistant", "content": [{"text": "x"}]}]}`, "ValidationException", 400},
		{"roles not alternating", "/model/m/converse", sigAuth, `{"messages": [{"role": "user", "content": []}, {"role": "user", "content": []}]}`, "ValidationException", 400},
	} {
		w := post(t, bedrockstandin.New(), tt.path, tt.auth, tt.body)
		if w.Code != tt.status || !strings.HasPrefix(w.Header().Get("x-amzn-ErrorType"), tt.errType+":") {
			t.Errorf("%s: %d %q", tt.name, w.Code, w.Header().Get("x-amzn-ErrorType"))
		}
	}
}

// TestStandinEcho: unscripted, it says it is not a model, and calls the
// handoff tool when asked for a person.
func TestStandinEcho(t *testing.T) {
	s := bedrockstandin.New()
	w := post(t, s, "/model/m/converse", sigAuth, `{"messages": [{"role": "user", "content": [{"text": "hello"}]}]}`)
	var ans struct {
		Output struct {
			Message struct {
				Content []map[string]any `json:"content"`
			} `json:"message"`
		} `json:"output"`
		StopReason string `json:"stopReason"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &ans); err != nil || ans.StopReason != "end_turn" ||
		!strings.Contains(ans.Output.Message.Content[0]["text"].(string), "not a model") {
		t.Fatalf("%d %s", w.Code, w.Body)
	}
	w = post(t, s, "/model/m/converse", sigAuth, `{"messages": [{"role": "user", "content": [{"text": "a person please"}]}],
	  "toolConfig": {"tools": [{"toolSpec": {"name": "handoff", "inputSchema": {"json": {"type": "object"}}}}]}}`)
	if err := json.Unmarshal(w.Body.Bytes(), &ans); err != nil || ans.StopReason != "tool_use" {
		t.Fatalf("%d %s", w.Code, w.Body)
	}
	if got := len(s.Requests()); got != 2 {
		t.Errorf("%d requests recorded", got)
	}
}
