package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/alerts/notify/vendorformat"
)

// TestEndpointKindsEndToEnd is the end-to-end check of endpoint kinds:
// a Slack and a PagerDuty stand-in on loopback receive payloads valid in
// their vendors' pinned formats, and PagerDuty's trigger and resolve share
// their dedup key; on the embedded dev server and on DynamoDB (moto).
func TestEndpointKindsEndToEnd(t *testing.T) {
	args := []string{"-eval-every", "1s", "-allow-loopback-webhooks", "-retry-schedule", "0s,1s,2s"}
	t.Run("embedded", func(t *testing.T) {
		creds, stop := startDev(t, args...)
		defer func() { _ = stop() }()
		endpointKinds(t, creds)
	})
	t.Run("moto", func(t *testing.T) {
		creds, stop, ok := startDevOnMoto(t, args...)
		if !ok {
			return
		}
		defer func() { _ = stop() }()
		endpointKinds(t, creds)
	})
}

// standIn records what a vendor stand-in received, each body checked
// against the vendor's format, answering as the vendor does.
type standIn struct {
	mu     sync.Mutex
	bodies [][]byte
}

func (s *standIn) serve(t *testing.T, check func([]byte) error, status int, answer string) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if err := check(body); err != nil {
			t.Errorf("invalid payload: %v\n%s", err, body)
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		s.mu.Lock()
		s.bodies = append(s.bodies, body)
		s.mu.Unlock()
		w.WriteHeader(status)
		_, _ = io.WriteString(w, answer)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func (s *standIn) wait(t *testing.T, what string, n int) [][]byte {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		s.mu.Lock()
		got := append([][]byte(nil), s.bodies...)
		s.mu.Unlock()
		if len(got) >= n {
			return got
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s", what)
	return nil
}

func endpointKinds(t *testing.T, creds Credentials) {
	acct := creds.Accounts[0]
	project := acct.Projects[0].ProjectID
	var slack, pd standIn
	slackSrv := slack.serve(t, vendorformat.ValidateSlack, http.StatusOK, "ok")
	pdSrv := pd.serve(t, func(b []byte) error { _, err := vendorformat.ValidatePagerDuty(b); return err },
		http.StatusAccepted, `{"status":"success","message":"Event processed"}`)
	call := func(method, path, body string) map[string]any {
		t.Helper()
		return studioCall(t, creds.AgentStudioURL, method, path, "x-api-key", acct.APIKey, body)
	}
	const key = "R0123456789ABCDEF0123456789abcde"
	call("POST", "/v1/webhook-endpoints", `{"name":"#ops","kind":"slack","url":"`+slackSrv.URL+`/services/T0/B0/x","event_types":["alerts.triggered","alerts.resolved"]}`)
	pdEp := call("POST", "/v1/webhook-endpoints", `{"name":"on-call","kind":"pagerduty","url":"`+pdSrv.URL+`/v2/enqueue","routing_key":"`+key+`","event_types":["alerts.triggered","alerts.resolved"]}`)
	rule := call("POST", "/v1/alert-rules", `{"name":"errors","project_id":"`+project+`","metric":"api_errors","operator":">=","threshold_value":3,"window_duration":"5m"}`)
	at := time.Now().UTC().Add(-time.Minute).Format(time.RFC3339)
	var events []string
	for range 3 {
		events = append(events, fmt.Sprintf(`{"account_id":%q,"project_id":%q,"metric":"api_errors","at":%q}`, acct.AccountID, project, at))
	}
	studioCall(t, creds.AgentStudioURL, "POST", "/internal/v1/metric-events", "X-Internal-Key", creds.InternalKey, `{"events":[`+strings.Join(events, ",")+`]}`)
	slack.wait(t, "the slack trigger", 1)
	pd.wait(t, "the pagerduty trigger", 1)

	// Raise the threshold: the rule resolves.
	call("PATCH", "/v1/alert-rules/"+rule["id"].(string), `{"threshold_value":100}`)
	slackGot := slack.wait(t, "the slack resolve", 2)
	pdGot := pd.wait(t, "the pagerduty resolve", 2)

	var msgs []vendorformat.SlackMessage
	for _, b := range slackGot {
		var m vendorformat.SlackMessage
		_ = json.Unmarshal(b, &m)
		msgs = append(msgs, m)
	}
	if len(msgs) != 2 || !strings.Contains(msgs[0].Blocks[0].Text.Text, "Firing: errors") || !strings.Contains(msgs[1].Blocks[0].Text.Text, "Resolved: errors") {
		t.Errorf("slack messages: %s", slackGot)
	}
	if !strings.Contains(string(slackGot[0]), "/console/#/rules/"+rule["id"].(string)) {
		t.Errorf("slack message without the console link: %s", slackGot[0])
	}
	var pds []vendorformat.PagerDutyEvent
	for _, b := range pdGot {
		e, _ := vendorformat.ValidatePagerDuty(b)
		pds = append(pds, e)
	}
	if len(pds) != 2 || pds[0].EventAction != "trigger" || pds[1].EventAction != "resolve" || pds[0].RoutingKey != key {
		t.Fatalf("pagerduty events: %s", pdGot)
	}
	if pds[0].DedupKey == "" || pds[0].DedupKey != pds[1].DedupKey {
		t.Errorf("dedup keys %q and %q: want the trigger's on its resolve", pds[0].DedupKey, pds[1].DedupKey)
	}
	// The stand-in has the request before the dispatcher records its
	// answer: the log is read until both deliveries are recorded.
	delivered := func(log []any) bool {
		for _, d := range log {
			d := d.(map[string]any)
			attempts := d["attempts"].([]any)
			if d["status"] != "delivered" || len(attempts) == 0 || attempts[len(attempts)-1].(map[string]any)["status_code"] != float64(202) {
				return false
			}
		}
		return len(log) == 2
	}
	var log []any
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		log = call("GET", "/v1/webhook-endpoints/"+pdEp["id"].(string)+"/deliveries", "")["data"].([]any)
		if delivered(log) || time.Now().After(deadline) {
			break
		}
	}
	if !delivered(log) {
		t.Errorf("pagerduty delivery log, want 2 deliveries answered 202: %v", log)
	}
}
