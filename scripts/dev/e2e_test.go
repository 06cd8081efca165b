package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// received is one delivery that reached the test receiver.
type received struct {
	webhookID string
	eventType string
	body      []byte
	status    int
}

// TestAlertEndToEnd is the "done when", in process: the dev server
// with -eval-every 1s -allow-loopback-webhooks -retry-schedule 0s,1s,2s; an
// endpoint and a rule made through the API; metric events that breach the
// rule; a verified alerts.triggered (after one 500, retried with the same
// webhook-id), then alerts.resolved once the rule's threshold is raised.
func TestAlertEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test takes a few seconds")
	}
	creds, stop := startDev(t, "-eval-every", "1s", "-allow-loopback-webhooks", "-retry-schedule", "0s,1s,2s")
	defer func() {
		if err := stop(); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	}()
	acct := creds.Accounts[0]
	project := acct.Projects[0].ProjectID

	var mu sync.Mutex
	var got []received
	var secret string
	failFirst := true
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		wh, err := standardwebhooks.NewWebhook(secret)
		if err != nil {
			t.Errorf("secret: %v", err)
		}
		if err := wh.Verify(body, r.Header); err != nil {
			t.Errorf("Standard Webhooks signature: %v", err)
		}
		mac := hmac.New(sha256.New, []byte(secret))
		mac.Write([]byte(r.Header.Get("X-Service-Timestamp") + "." + string(body)))
		if want := hex.EncodeToString(mac.Sum(nil)); r.Header.Get("X-Service-Signature") != want {
			t.Errorf("X-Service-Signature %q, want %q", r.Header.Get("X-Service-Signature"), want)
		}
		if r.Header.Get("X-Service-Event-ID") != r.Header.Get("webhook-id") || r.Header.Get("X-Team") != "ops" {
			t.Errorf("headers %v", r.Header)
		}
		var ev struct {
			EventType string `json:"event_type"`
		}
		_ = json.Unmarshal(body, &ev)
		status := http.StatusNoContent
		if failFirst {
			failFirst, status = false, http.StatusInternalServerError
		}
		got = append(got, received{webhookID: r.Header.Get("webhook-id"), eventType: ev.EventType, body: body, status: status})
		w.WriteHeader(status)
	}))
	defer receiver.Close()

	call := func(method, path, header, key, body string) map[string]any {
		t.Helper()
		return studioCall(t, creds.AgentStudioURL, method, path, header, key, body)
	}
	ep := call("POST", "/v1/webhook-endpoints", "x-api-key", acct.APIKey,
		`{"name":"local","url":"`+receiver.URL+`/hook","event_types":["alerts.triggered","alerts.resolved"],"headers":{"X-Team":"ops"}}`)
	mu.Lock()
	secret = ep["signing_secret"].(string)
	mu.Unlock()
	rule := call("POST", "/v1/alert-rules", "x-api-key", acct.APIKey,
		`{"name":"errors","project_id":"`+project+`","metric":"api_errors","operator":">=","threshold_value":3,"window_duration":"5m"}`)
	at := time.Now().UTC().Add(-time.Minute).Format(time.RFC3339)
	var events []string
	for i := 0; i < 3; i++ {
		events = append(events, fmt.Sprintf(`{"account_id":%q,"project_id":%q,"metric":"api_errors","at":%q}`, acct.AccountID, project, at))
	}
	if out := call("POST", "/internal/v1/metric-events", "X-Internal-Key", creds.InternalKey, `{"events":[`+strings.Join(events, ",")+`]}`); out["accepted"] != float64(3) {
		t.Fatalf("intake: %v", out)
	}

	waitFor := func(what string, cond func([]received) bool) []received {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for time.Now().Before(deadline) {
			mu.Lock()
			snap := append([]received(nil), got...)
			mu.Unlock()
			if cond(snap) {
				return snap
			}
			time.Sleep(50 * time.Millisecond)
		}
		t.Fatalf("timed out waiting for %s; received %d deliveries", what, len(got))
		return nil
	}
	snap := waitFor("alerts.triggered delivered", func(rs []received) bool {
		return len(rs) >= 2 && rs[len(rs)-1].status == http.StatusNoContent
	})
	if snap[0].eventType != "alerts.triggered" || snap[0].status != 500 || snap[1].webhookID != snap[0].webhookID || string(snap[1].body) != string(snap[0].body) {
		t.Fatalf("first deliveries: %+v", snap)
	}
	if got := call("GET", "/v1/alerts", "x-api-key", acct.APIKey, "")["data"].([]any); len(got) != 1 {
		t.Errorf("active alerts: %v", got)
	}
	// The receiver has the request before the dispatcher records its
	// answer: the log is read until the delivery is recorded.
	recorded := func(log []any) bool {
		return len(log) == 1 && log[0].(map[string]any)["status"] == "delivered" && len(log[0].(map[string]any)["attempts"].([]any)) == 2
	}
	var log []any
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		log = call("GET", "/v1/webhook-endpoints/"+ep["id"].(string)+"/deliveries", "x-api-key", acct.APIKey, "")["data"].([]any)
		if recorded(log) || time.Now().After(deadline) {
			break
		}
	}
	if !recorded(log) {
		t.Errorf("delivery log: %v", log)
	}

	// Raise the threshold: the next evaluation resolves the alert.
	call("PATCH", "/v1/alert-rules/"+rule["id"].(string), "x-api-key", acct.APIKey, `{"threshold_value":100}`)
	snap = waitFor("alerts.resolved", func(rs []received) bool { return rs[len(rs)-1].eventType == "alerts.resolved" })
	last := snap[len(snap)-1]
	if last.webhookID == snap[0].webhookID || !strings.Contains(string(last.body), `"previous_state":"alert","current_state":"ok"`) {
		t.Errorf("resolved delivery: %s", last.body)
	}
	// Exactly one triggered and one resolved event reached the receiver.
	ids := map[string]string{}
	for _, r := range snap {
		ids[r.webhookID] = r.eventType
	}
	if len(ids) != 2 {
		t.Errorf("%d distinct events, want 2: %v", len(ids), ids)
	}
}
