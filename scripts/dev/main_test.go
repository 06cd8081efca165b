package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/voiceops/opsapi/shared/platform/tables"
	"github.com/voiceops/opsapi/shared/store/dynamo"
	"github.com/voiceops/opsapi/shared/testsupport/awstest"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// startDev runs the dev server on a free port and returns its credentials.
func startDev(t *testing.T, args ...string) (Credentials, func() error) {
	t.Helper()
	return startDevEnv(t, func(string) string { return "" }, args...)
}

// startDevEnv is startDev with an environment.
func startDevEnv(t *testing.T, getenv func(string) string, args ...string) (Credentials, func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan Credentials, 1)
	done := make(chan error, 1)
	var stdout bytes.Buffer
	go func() {
		done <- run(ctx, append([]string{"-addr", "127.0.0.1:0"}, args...), getenv, &stdout, io.Discard, ready)
	}()
	select {
	case c := <-ready:
		return c, func() error { cancel(); return <-done }
	case err := <-done:
		cancel()
		t.Fatalf("dev server exited: %v", err)
	case <-time.After(60 * time.Second): // on moto, creating the tables and queues takes a while
		cancel()
		t.Fatal("dev server not ready after 60s")
	}
	return Credentials{}, nil
}

// startDevOnMoto runs the dev server on tables of its own on the test's
// moto server (dropped after the test: moto slows as data grows); ok is
// false when no moto server is configured.
func startDevOnMoto(t *testing.T, args ...string) (creds Credentials, stop func() error, ok bool) {
	t.Helper()
	if !awstest.Available(t) {
		return Credentials{}, nil, false
	}
	t.Setenv("AWS_ENDPOINT_URL", os.Getenv(awstest.EndpointEnv))
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	prefix := "dev-" + strings.ToLower(voiceops.RandomBase62(10))
	db := awstest.DynamoDB(t)
	t.Cleanup(func() {
		names := dynamo.TableNamesFor(prefix)
		for _, tbl := range tables.All {
			_, _ = db.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(names.Of(tbl))})
		}
	})
	creds, stop = startDevEnv(t, os.Getenv, append(args, "-table-prefix", prefix)...)
	return creds, stop, true
}

func TestDevServerServesTheAPIAndWritesCredentials(t *testing.T) {
	path := filepath.Join(t.TempDir(), "creds.json")
	creds, stop := startDev(t, "-credentials", path)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var fromFile map[string]any
	if err := json.Unmarshal(b, &fromFile); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"agent_studio_url", "base_url", "region", "internal_key", "accounts"} {
		if _, ok := fromFile[k]; !ok {
			t.Errorf("credentials lack %q", k)
		}
	}
	if len(creds.Accounts) != 2 || len(creds.Accounts[0].Projects) != 2 || len(creds.Accounts[1].Projects) != 2 {
		t.Fatalf("want 2 accounts with 2 projects each: %+v", creds)
	}
	p := creds.Accounts[0].Projects[0]
	for name, v := range map[string]string{"api_key": p.APIKey, "agent_token": p.AgentToken, "service_auth_token": p.ServiceAuthToken, "events_key": p.EventsKey} {
		if v == "" {
			t.Errorf("project credential %s is empty", name)
		}
	}

	call := func(method, path, key, body string) (int, string) {
		req, _ := http.NewRequest(method, creds.AgentStudioURL+path, strings.NewReader(body))
		req.Header.Set("x-api-key", key)
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		out, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(out)
	}
	acct := creds.Accounts[0]
	if st, body := call("POST", "/v1/alert-rules", acct.APIKey, `{"name":"r","metric":"api_errors","operator":">=","threshold_value":10,"window_duration":"5m","project_id":"`+acct.Projects[0].ProjectID+`"}`); st != 201 {
		t.Errorf("create rule: %d %s", st, body)
	}
	if st, _ := call("GET", "/v1/alert-rules", creds.Accounts[1].APIKey, ""); st != 200 {
		t.Errorf("second account: %d", st)
	}
	if st, _ := call("GET", "/v1/alert-rules", p.APIKey, ""); st != 403 {
		t.Errorf("project-scoped key on the studio host: %d, want 403", st)
	}
	if st, body := call("GET", "/openapi.json", "", ""); st != 200 || !strings.Contains(body, `"openapi"`) {
		t.Errorf("openapi.json: %d", st)
	}
	if err := stop(); err != nil {
		t.Errorf("shutdown: %v", err)
	}
}

// -api-only is the load tests' baseline: the same API, none of the dev
// server's own layers.
func TestDevServerAPIOnlyServesTheAPIWithoutItsLayers(t *testing.T) {
	for _, apiOnly := range []bool{false, true} {
		var args []string
		if apiOnly {
			args = []string{"-api-only"}
		}
		creds, stop := startDev(t, args...)
		get := func(path, host string) int {
			req, _ := http.NewRequest("GET", creds.AgentStudioURL+path, nil)
			req.Header.Set("x-api-key", creds.Accounts[0].APIKey)
			if host != "" {
				req.Host = host
			}
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, res.Body)
			res.Body.Close()
			return res.StatusCode
		}
		for _, path := range []string{"/v1/alert-rules", "/console/"} { // the console is the API's
			if st := get(path, ""); st != 200 {
				t.Errorf("api-only %v: %s answered %d", apiOnly, path, st)
			}
		}
		want := map[bool]map[string]int{
			false: {"/metrics": 200, "/openapi.json": 200, "other host": 421},
			true:  {"/metrics": 404, "/openapi.json": 404, "other host": 200},
		}[apiOnly]
		got := map[string]int{"/metrics": get("/metrics", ""), "/openapi.json": get("/openapi.json", ""), "other host": get("/v1/alert-rules", "rebound.example")}
		for k, w := range want {
			if got[k] != w {
				t.Errorf("api-only %v: %s answered %d, want %d", apiOnly, k, got[k], w)
			}
		}
		if err := stop(); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	}
}

func TestDevServerPrintsCredentialsWithoutFlag(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var stdout bytes.Buffer
	ready := make(chan Credentials, 1)
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"-addr", "127.0.0.1:0"}, func(string) string { return "" }, &stdout, io.Discard, ready)
	}()
	<-ready
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	var c Credentials
	if err := json.Unmarshal(stdout.Bytes(), &c); err != nil || len(c.Accounts) != 2 {
		t.Errorf("stdout is not the credentials JSON: %v %q", err, stdout.String())
	}
}

func TestDevServerRejectsBadFlags(t *testing.T) {
	for _, args := range [][]string{{"-region", "mars"}, {"-bogus"}, {"extra"}, {"-conversation-idle-timeout", "0s"}, {"-conversation-idle-timeout", "soon"}} {
		if err := run(context.Background(), args, func(string) string { return "" }, io.Discard, io.Discard, nil); err == nil {
			t.Errorf("%v accepted", args)
		}
	}
}

func TestDevServerChatWithTheDemoAgent(t *testing.T) {
	creds, stop := startDev(t)
	defer func() { _ = stop() }()
	acct := creds.Accounts[1]
	p := acct.Projects[1]
	call := func(method, path, body string) (int, map[string]any) {
		t.Helper()
		return chatCall(t, creds.BaseURL, p.APIKey, p.AgentToken, method, path, body)
	}
	base := "/v1/" + acct.AccountID + "/" + p.ProjectID + "/chat/"
	st, created := call("POST", base+"create", `{"channel":"webchat"}`)
	if st != 200 || created["conversation_id"] == "" || created["response"] == "" {
		t.Fatalf("create: %d %v", st, created)
	}
	id := created["conversation_id"].(string)
	st, ans := call("POST", base+"respond", `{"conversation_id":"`+id+`","message":"I need a human"}`)
	if st != 200 || ans["end_conversation"] != true || ans["handoff"].(map[string]any)["destination"] != "support-queue" {
		t.Fatalf("respond: %d %v", st, ans)
	}
	if st, body := call("POST", base+"respond", `{"conversation_id":"`+id+`","message":"hello?"}`); st != 410 || body["error_message"] == "" {
		t.Errorf("respond after handoff: %d %v", st, body)
	}
	if st, _ := call("POST", "/v2/"+acct.AccountID+"/"+p.ProjectID+"/chat/create", `{}`); st != 404 {
		t.Errorf("chat v2: %d", st)
	}
}

// TestDevServerEndsIdleChats: with -conversation-idle-timeout 1s, a chat
// left alone is ended by the service (end reason timeout) within seconds,
// and respond is then 410.
func TestDevServerEndsIdleChats(t *testing.T) {
	creds, stop := startDev(t, "-conversation-idle-timeout", "1s")
	defer func() { _ = stop() }()
	acct := creds.Accounts[0]
	p := acct.Projects[0]
	call := func(method, path, body string) (int, map[string]any) {
		t.Helper()
		return chatCall(t, creds.BaseURL, p.APIKey, p.AgentToken, method, path, body)
	}
	base := "/v1/" + acct.AccountID + "/" + p.ProjectID + "/chat/"
	st, created := call("POST", base+"create", `{"channel":"webchat"}`)
	if st != 200 {
		t.Fatalf("create: %d %v", st, created)
	}
	id := created["conversation_id"].(string)
	// Wait (bounded) for the sweep: the listing shows the chat ended.
	list := "/v3/" + acct.AccountID + "/" + p.ProjectID + "/conversations?in_progress=false&channel=webchat"
	deadline := time.Now().Add(20 * time.Second)
	var reason any
	for time.Now().Before(deadline) {
		_, page := call("GET", list, "")
		for _, c := range page["conversations"].([]any) {
			if c := c.(map[string]any); c["id"] == id {
				reason = c["metrics"].(map[string]any)["END_REASON"]
			}
		}
		if reason != nil {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if reason != "timeout" {
		t.Fatalf("the idle chat was not ended by the service: END_REASON %v", reason)
	}
	if st, body := call("POST", base+"respond", `{"conversation_id":"`+id+`","message":"hello?"}`); st != 410 || body["error_message"] == "" {
		t.Errorf("respond after the idle end: %d %v", st, body)
	}
	if st, body := call("PUT", base+"close", `{"conversation_id":"`+id+`"}`); st != 410 {
		t.Errorf("close after the idle end: %d %v", st, body)
	}
}

// studioCall sends a request to the studio host with one key header and
// returns the decoded answer, failing t on a status of 300 or more.
func studioCall(t *testing.T, baseURL, method, path, header, key, body string) map[string]any {
	t.Helper()
	req, _ := http.NewRequest(method, baseURL+path, strings.NewReader(body))
	req.Header.Set(header, key)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(res.Body).Decode(&out)
	if res.StatusCode >= 300 {
		t.Fatalf("%s %s: %d %v", method, path, res.StatusCode, out)
	}
	return out
}

// chatCall sends a chat request with a project's keys and returns the
// status and the decoded answer.
func chatCall(t *testing.T, baseURL, apiKey, token, method, path, body string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(method, baseURL+path, strings.NewReader(body))
	req.Header.Set("X-API-KEY", apiKey)
	req.Header.Set("X-TOKEN", token)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(res.Body).Decode(&out)
	return res.StatusCode, out
}
