//go:build stack

package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/voiceops/opsapi/scripts/stack/iam"
	"github.com/voiceops/opsapi/shared/conversations/agent"
	"github.com/voiceops/opsapi/shared/store/dynamo"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// alertSetup registers a verified local receiver for an account and a
// rule of 3 or more API errors in 5 minutes on its first project.
func alertSetup(t *testing.T, acct AccountCredentials) (*receiver, string) {
	t.Helper()
	return alertSetupOn(t, acct, acct.Projects[0])
}

// alertSetupOn is alertSetup on a project of the account; the endpoint
// and the rule are deleted when the test ends, so that later tests of the
// account neither deliver to its closed receiver nor fire its rule.
func alertSetupOn(t *testing.T, acct AccountCredentials, proj ProjectCredentials) (*receiver, string) {
	t.Helper()
	studio := st.Credentials.AgentStudioURL
	key := map[string]string{"x-api-key": acct.APIKey}
	rc, _ := receiverEndpoint(t, acct, "local")
	var rule struct{ ID string }
	if code, _, b := call(t, "POST", studio+"/v1/alert-rules", key, map[string]any{
		"name": "Errors", "project_id": proj.ProjectID, "metric": "api_errors", "operator": ">=", "threshold_value": 3, "window_duration": "5m",
	}, &rule); code != http.StatusCreated {
		t.Fatalf("creating the rule: %d %s", code, b)
	}
	t.Cleanup(func() { call(t, "DELETE", studio+"/v1/alert-rules/"+rule.ID, key, nil, nil) })
	return rc, rule.ID
}

// receiverEndpoint starts a local receiver of the account's alert events
// and registers it as a webhook endpoint named name, both removed when the
// test ends; it returns the receiver, set to verify the endpoint's
// signatures, and the endpoint's ID.
func receiverEndpoint(t *testing.T, acct AccountCredentials, name string) (*receiver, string) {
	t.Helper()
	studio := st.Credentials.AgentStudioURL
	key := map[string]string{"x-api-key": acct.APIKey}
	rc := newReceiver()
	srv := httptest.NewServer(rc)
	t.Cleanup(srv.Close)
	var ep struct {
		ID            string `json:"id"`
		SigningSecret string `json:"signing_secret"`
	}
	if code, _, b := call(t, "POST", studio+"/v1/webhook-endpoints", key, map[string]any{
		"name": name, "url": srv.URL + "/hook", "event_types": []string{"alerts.triggered", "alerts.resolved"},
	}, &ep); code != http.StatusCreated {
		t.Fatalf("creating the endpoint: %d %s", code, b)
	}
	t.Cleanup(func() { call(t, "DELETE", studio+"/v1/webhook-endpoints/"+ep.ID, key, nil, nil) })
	if err := rc.setSecret(ep.SigningSecret); err != nil {
		t.Fatal(err)
	}
	return rc, ep.ID
}

// postErrors posts n API errors of the account's first project through the
// internal metric intake and returns when the intake accepted them.
func postErrors(t testing.TB, acct AccountCredentials, n int) time.Time {
	t.Helper()
	return postErrorsOn(t, acct, acct.Projects[0], n)
}

// postErrorsOn is postErrors on a project of the account.
func postErrorsOn(t testing.TB, acct AccountCredentials, proj ProjectCredentials, n int) time.Time {
	t.Helper()
	code, _, b := call(t, "POST", st.Credentials.AgentStudioURL+"/internal/v1/metric-events", map[string]string{"X-Internal-Key": st.Credentials.InternalKey},
		map[string]any{"events": []map[string]any{{"account_id": acct.AccountID, "project_id": proj.ProjectID, "metric": "api_errors", "value": n,
			"at": time.Now().UTC().Format(time.RFC3339)}}}, nil)
	if code/100 != 2 {
		t.Fatalf("metric intake: %d %s", code, b)
	}
	return time.Now()
}

// An alert fires through the metrics table's stream mapping and resolves
// when its threshold is raised; every delivery is signed and verified.
func TestAlertFiresAndResolves(t *testing.T) {
	acct := st.Credentials.Accounts[0]
	rc, ruleID := alertSetup(t, acct)
	accepted := postErrors(t, acct, 5)
	d := rc.next(t, "alerts.triggered", 30*time.Second)
	if d.Verified != nil {
		t.Fatalf("alerts.triggered not verified: %v", d.Verified)
	}
	t.Logf("time to notify: %s", d.At.Sub(accepted))
	var alerts struct{ Data []map[string]any }
	if code, _, b := call(t, "GET", st.Credentials.AgentStudioURL+"/v1/alerts", map[string]string{"x-api-key": acct.APIKey}, nil, &alerts); code != 200 || len(alerts.Data) != 1 {
		t.Fatalf("GET /v1/alerts = %d %s, want the one firing rule", code, b)
	}
	if code, _, b := call(t, "PATCH", st.Credentials.AgentStudioURL+"/v1/alert-rules/"+ruleID, map[string]string{"x-api-key": acct.APIKey},
		map[string]any{"threshold_value": 100}, nil); code != 200 {
		t.Fatalf("PATCH: %d %s", code, b)
	}
	if d := rc.next(t, "alerts.resolved", 30*time.Second); d.Verified != nil {
		t.Fatalf("alerts.resolved not verified: %v", d.Verified)
	}
}

// A chat conversation, then its idle end by the scheduled sweeper: the
// stored conversation is ended with reason timeout, and respond is 410.
func TestChatEndsIdleBySweeper(t *testing.T) {
	acct := st.Credentials.Accounts[1]
	proj := acct.Projects[0]
	names := st.Topology.TableNames()
	db := dynamodb.NewFromConfig(st.AWS)
	cfg := agent.DemoConfig(acct.AccountID, proj.ProjectID)
	cfg.ChatIdleTimeoutSeconds = 2
	if err := agent.PutConfig(context.Background(), dynamo.NewConfig(db, names.Config, names.Deliveries).AgentConfigs(), cfg); err != nil {
		t.Fatal(err)
	}
	chat := fmt.Sprintf("%s/v1/%s/%s/chat", st.Credentials.BaseURL, acct.AccountID, proj.ProjectID)
	h := map[string]string{"X-API-KEY": proj.APIKey, "X-TOKEN": proj.AgentToken}
	var created struct {
		ConversationID string `json:"conversation_id"`
	}
	if code, _, b := call(t, "POST", chat+"/create", h, map[string]any{"channel": "webchat"}, &created); code != 200 && code != 201 {
		t.Fatalf("chat create: %d %s", code, b)
	}
	var answer struct{ Response string }
	if code, _, b := call(t, "POST", chat+"/respond", h, map[string]any{"conversation_id": created.ConversationID, "message": "what is my balance?"}, &answer); code != 200 || answer.Response == "" {
		t.Fatalf("chat respond: %d %s", code, b)
	}
	convs := dynamo.NewStores(db, names).Conversations
	deadline := time.Now().Add(45 * time.Second)
	for {
		c, err := convs.GetConversation(context.Background(), acct.AccountID, proj.ProjectID, created.ConversationID)
		if err != nil {
			t.Fatal(err)
		}
		if !c.InProgress {
			if c.EndReason != voiceops.EndTimeout {
				t.Fatalf("ended with %q, want timeout", c.EndReason)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the sweeper did not end the idle conversation within 45 s")
		}
		time.Sleep(500 * time.Millisecond)
	}
	if code, _, b := call(t, "POST", chat+"/respond", h, map[string]any{"conversation_id": created.ConversationID, "message": "hello?"}, nil); code != http.StatusGone {
		t.Fatalf("respond after the idle end = %d %s, want 410", code, b)
	}
}

// jsonError is the service's error shape.
type jsonError struct {
	Message   string `json:"message"`
	RequestID string `json:"request_id"`
}

// The function's timeout must leave room for the request deadline.
func TestDeadlineAnswersJSON500(t *testing.T) {
	acct := st.Credentials.Accounts[0]
	// Every AWS call of alerts hangs for 29 s (until the caller gives up):
	// whatever the request deadline under API Gateway's 30 s, the first
	// call outlasts it.
	st.Proxy.SetDelay("alerts", 29*time.Second)
	defer st.Proxy.SetDelay("alerts", 0)
	var e jsonError
	code, _, b := call(t, "GET", st.Credentials.AgentStudioURL+"/v1/alert-rules", map[string]string{"x-api-key": acct.APIKey}, nil, &e)
	if code != http.StatusInternalServerError || e.RequestID == "" {
		t.Fatalf("a request past its deadline = %d %s, want the documented JSON 500 with request_id", code, b)
	}
}

// $default routes send unknown paths and methods to the service.
func TestUnknownPathAndMethodAnswerJSON(t *testing.T) {
	for _, tt := range []struct {
		url, method string
		status      int
		baseShape   bool // the base host's shape, {"error_message"}; else {"message"}
	}{
		{st.Credentials.AgentStudioURL + "/v1/no-such-thing", "GET", 404, false},
		// A path of neither host's prefixes: the shape is the host's (the
		// stage variable error_family), not the path's.
		{st.Credentials.AgentStudioURL + "/nope", "GET", 404, false},
		{st.Credentials.BaseURL + "/v1/no-such-thing", "GET", 404, true},
		{st.Credentials.BaseURL + "/nope", "GET", 404, true},
		{st.Credentials.AgentStudioURL + "/v1/alerts", "DELETE", 405, false},
		{st.Credentials.BaseURL + "/v1/outbound-calling/trigger", "GET", 405, true},
	} {
		var e struct {
			Message      *string `json:"message"`
			ErrorMessage *string `json:"error_message"`
			RequestID    string  `json:"request_id"`
		}
		code, h, b := call(t, tt.method, tt.url, nil, nil, &e)
		if code != tt.status || e.RequestID == "" || h.Get("X-Request-Id") == "" {
			t.Errorf("%s %s = %d %s, want the service's JSON %d with request_id", tt.method, tt.url, code, b, tt.status)
		}
		if tt.baseShape && (e.ErrorMessage == nil || e.Message != nil) || !tt.baseShape && (e.Message == nil || e.ErrorMessage != nil) {
			t.Errorf("%s %s = %s, want the host's error shape (the base host: %v)", tt.method, tt.url, b, tt.baseShape)
		}
		if tt.status == 405 && h.Get("Allow") == "" {
			t.Errorf("%s %s: 405 without Allow", tt.method, tt.url)
		}
	}
}

// An Idempotency-Key with a comma replays only its own request.
func TestIdempotencyKeyWithComma(t *testing.T) {
	acct := st.Credentials.Accounts[1]
	create := func(key, name string) (int, string) {
		var r struct{ ID string }
		code, _, b := call(t, "POST", st.Credentials.AgentStudioURL+"/v1/alert-rules", map[string]string{"x-api-key": acct.APIKey, "Idempotency-Key": key},
			map[string]any{"name": name, "project_id": acct.Projects[1].ProjectID, "metric": "api_errors", "operator": ">=", "threshold_value": 3, "window_duration": "5m"}, &r)
		if code/100 != 2 {
			t.Logf("create with %q: %d %s", key, code, b)
		}
		return code, r.ID
	}
	c1, id1 := create("order-42,retry-1", "first")
	c2, id2 := create("order-42,retry-2", "second")
	c3, id3 := create("order-42,retry-1", "first")
	if c1 != 201 || c2 != 201 || id1 == id2 {
		t.Fatalf("keys order-42,retry-1 and order-42,retry-2 = %d %s and %d %s: want two rules", c1, id1, c2, id2)
	}
	if c3/100 != 2 || id3 != id1 {
		t.Fatalf("replaying order-42,retry-1 = %d %s, want the first rule %s", c3, id3, id1)
	}
}

// The walkthrough of docs/getting-started.md, in brief: the keys work on both hosts, the
// seeded DNI pool answers, and each host serves only its own routes.
func TestHostsServeTheirRoutes(t *testing.T) {
	acct := st.Credentials.Accounts[0]
	if code, _, b := call(t, "GET", st.Credentials.AgentStudioURL+"/v1/webhook-endpoints", map[string]string{"x-api-key": acct.APIKey}, nil, nil); code != 200 {
		t.Fatalf("studio host: %d %s", code, b)
	}
	p := acct.Projects[0]
	u := fmt.Sprintf("%s/v3/%s/%s/conversations", st.Credentials.BaseURL, acct.AccountID, p.ProjectID)
	if code, _, b := call(t, "GET", u, map[string]string{"x-api-key": p.APIKey}, nil, nil); code != 200 {
		t.Fatalf("base host: %d %s", code, b)
	}
	// The seeded DNI pool answers a reservation (calls function).
	var res struct{ DNI string }
	if code, _, b := call(t, "POST", st.Credentials.BaseURL+"/v1/conversations/dni-reservation", map[string]string{"x-api-key": p.APIKey},
		map[string]any{"attributes": map[string]string{"order_id": "A-1042"}}, &res); code/100 != 2 || !strings.HasPrefix(res.DNI, "+44163296") {
		t.Fatalf("DNI reservation: %d %s", code, b)
	}
	// The studio routes are not on the base host.
	if code, _, _ := call(t, "GET", st.Credentials.BaseURL+"/v1/alert-rules", map[string]string{"x-api-key": acct.APIKey}, nil, nil); code == 200 {
		t.Fatal("the base host serves the studio's routes")
	}
}

// A receiver that always fails: the delivery is tried on its schedule
// (the run's 0s,1s,2s: three attempts) and ends failed in the delivery
// log, "the schedule is spent".
func TestFailingReceiverSpendsTheSchedule(t *testing.T) {
	acct := st.Credentials.Accounts[1]
	key := map[string]string{"x-api-key": acct.APIKey}
	rc := newReceiver()
	rc.fail = true
	srv := httptest.NewServer(rc)
	defer srv.Close()
	var ep struct {
		ID            string `json:"id"`
		SigningSecret string `json:"signing_secret"`
	}
	studio := st.Credentials.AgentStudioURL
	if code, _, b := call(t, "POST", studio+"/v1/webhook-endpoints", key, map[string]any{
		"name": "always-failing", "url": srv.URL + "/hook", "event_types": []string{"alerts.triggered"}}, &ep); code != http.StatusCreated {
		t.Fatalf("creating the endpoint: %d %s", code, b)
	}
	t.Cleanup(func() { call(t, "DELETE", studio+"/v1/webhook-endpoints/"+ep.ID, key, nil, nil) })
	if err := rc.setSecret(ep.SigningSecret); err != nil {
		t.Fatal(err)
	}
	if code, _, b := call(t, "POST", studio+"/v1/webhook-endpoints/"+ep.ID+"/test", key, nil, nil); code/100 != 2 {
		t.Fatalf("test event: %d %s", code, b)
	}
	var attempts []time.Time
	for range 3 {
		select {
		case d := <-rc.got:
			if d.Verified != nil {
				t.Errorf("attempt not verified: %v", d.Verified)
			}
			attempts = append(attempts, d.At)
		case <-time.After(30 * time.Second):
			t.Fatalf("%d attempts arrived, want 3", len(attempts))
		}
	}
	// Each delay runs from the attempt before (jitter is a few percent).
	if gap := attempts[2].Sub(attempts[1]); gap < time.Second {
		t.Errorf("the third attempt came %s after the second, well before its 2 s delay", gap)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		var log struct {
			Data []struct {
				Status string `json:"status"`
			} `json:"data"`
		}
		code, _, b := call(t, "GET", studio+"/v1/webhook-endpoints/"+ep.ID+"/deliveries", key, nil, &log)
		if code != 200 {
			t.Fatalf("delivery log: %d %s", code, b)
		}
		if len(log.Data) == 1 && log.Data[0].Status == "failed" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("delivery log %s, want one delivery, failed", b)
		}
		time.Sleep(500 * time.Millisecond)
	}
	select {
	case <-rc.got:
		t.Fatal("a fourth attempt after the schedule was spent")
	case <-time.After(3 * time.Second):
	}
}

// The roles' policies come from the template: the intake may write the
// metrics table (one of the write actions, whichever its grant names) and
// nothing of the config table, the queues or project functions (decisions
// only: no call is made, so no denial is recorded).
func TestTemplatePoliciesApply(t *testing.T) {
	names := st.Topology.TableNames()
	intake, ok := st.Proxy.Principals[accessKeyID("intake")]
	if !ok {
		t.Fatal("no principal for the intake function")
	}
	metrics := st.Proxy.ARNs.Table(names.Metrics)
	writes := false
	for _, a := range []string{"dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:BatchWriteItem"} {
		writes = writes || intake.Policy.Evaluate(iam.Request{Action: a, Resource: metrics}).Allowed
	}
	if !writes {
		t.Errorf("intake may not write %s", metrics)
	}
	for _, req := range []iam.Request{
		{Action: "dynamodb:GetItem", Resource: st.Proxy.ARNs.Table(names.Config)},
		{Action: "dynamodb:PutItem", Resource: st.Proxy.ARNs.Table(names.Config)},
		{Action: "sqs:SendMessage", Resource: st.Proxy.ARNs.Queue("anything")},
		{Action: "lambda:InvokeFunction", Resource: st.Proxy.ARNs.Function("voiceops-fn-x")},
	} {
		if intake.Policy.Evaluate(req).Allowed {
			t.Errorf("intake may do %v", req)
		}
	}
}
