package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/voiceops/opsapi/shared/conversations/agent"
	"github.com/voiceops/opsapi/shared/conversations/agent/bedrockstandin"
	"github.com/voiceops/opsapi/shared/ops/operatorapi"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// TestDevServerChatsWithABedrockAgent: with the SDK's endpoint variable
// pointing at the stand-in, the dev server answers a bedrock agent's chat
// through it (requests signed with the local keys), and the stand-in's
// handoff tool call hands the conversation off.
func TestDevServerChatsWithABedrockAgent(t *testing.T) {
	standin := bedrockstandin.New()
	standin.Credentials = map[string]string{localKey: localKey} // the signature is checked, not only its form
	srv := httptest.NewServer(standin)
	defer srv.Close()
	t.Setenv("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", srv.URL)
	for _, k := range []string{"AWS_ENDPOINT_URL", "AWS_REGION", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"} {
		t.Setenv(k, "") // the in-memory stores and the local keys; the SDK ignores empty variables
	}
	creds, stop := startDevEnv(t, os.Getenv)
	defer stop()

	acct, proj := creds.Accounts[0], creds.Accounts[0].Projects[0]
	cfg, err := agent.ParseConfig([]byte(`{"account_id":"`+acct.AccountID+`","project_id":"`+proj.ProjectID+`",
		"variants":[{"id":"llm","agent":{"type":"bedrock","bedrock":{"model_id":"anthropic.claude-3-haiku-20240307-v1:0",
		"system_prompt":"You answer for Acme.","fallback":"Sorry, one moment please.",
		"handoff":{"destination":"support-queue","reason":"asked for a person"}}}}]}`), voiceops.URLPolicy{})
	if err != nil {
		t.Fatal(err)
	}
	op := &operatorapi.Client{BaseURL: creds.AgentStudioURL, InternalKey: creds.InternalKey}
	if err := agent.PutConfig(context.Background(), op.Stores().Agents, cfg); err != nil {
		t.Fatal(err)
	}

	chat := func(path, body string) map[string]any {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, creds.BaseURL+"/v1/"+acct.AccountID+"/"+proj.ProjectID+"/chat/"+path, strings.NewReader(body))
		req.Header.Set("X-API-KEY", proj.APIKey)
		req.Header.Set("X-TOKEN", proj.AgentToken)
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		var out map[string]any
		if res.StatusCode != http.StatusOK || json.Unmarshal(b, &out) != nil {
			t.Fatalf("chat/%s: %d %s", path, res.StatusCode, b)
		}
		return out
	}
	created := chat("create", `{"initial_message":"where is my order?"}`)
	if got, _ := created["response"].(string); !strings.Contains(got, `not a model) You said: "where is my order?"`) {
		t.Errorf("the first answer is not the stand-in's: %v", created)
	}
	id, _ := created["conversation_id"].(string)
	handed := chat("respond", `{"conversation_id":"`+id+`","message":"let me talk to a person"}`)
	if h, _ := handed["handoff"].(map[string]any); h == nil || h["destination"] != "support-queue" {
		t.Errorf("asking for a person: %v, want a handoff to support-queue", handed)
	}
	reqs := standin.Requests()
	if len(reqs) < 2 || reqs[0].ModelID != "anthropic.claude-3-haiku-20240307-v1:0" || reqs[0].Region != "us-east-1" {
		t.Errorf("the stand-in received %+v", reqs)
	}
}
