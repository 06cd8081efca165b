package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// TestStoredDataFiresTheRule: with the schedule an hour away, a breaching
// event stored through the intake fires the rule: embedded through the
// memory store's notification, and on moto through the metrics table's
// stream read with the DynamoDB Streams API. A rule created when its scope
// already breaches fires too (its creation wakes the scope).
func TestStoredDataFiresTheRule(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test takes a few seconds")
	}
	t.Run("embedded", func(t *testing.T) {
		creds, stop := startDev(t, "-eval-every", "1h", "-allow-loopback-webhooks")
		defer func() { _ = stop() }()
		storedDataFires(t, creds)
	})
	t.Run("moto stream", func(t *testing.T) {
		creds, stop, ok := startDevOnMoto(t, "-eval-every", "1h", "-allow-loopback-webhooks")
		if !ok {
			return
		}
		defer func() { _ = stop() }()
		storedDataFires(t, creds)
	})
}

func storedDataFires(t *testing.T, creds Credentials) {
	acct := creds.Accounts[0]
	var mu sync.Mutex
	triggered := map[string]int{} // rule ID -> alerts.triggered deliveries
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var ev struct {
			EventType string `json:"event_type"`
			Alert     struct {
				ID string `json:"id"`
			} `json:"alert"`
		}
		_ = json.NewDecoder(r.Body).Decode(&ev)
		if ev.EventType == "alerts.triggered" {
			mu.Lock()
			triggered[ev.Alert.ID]++
			mu.Unlock()
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer receiver.Close()
	call := func(method, path, header, key, body string) map[string]any {
		t.Helper()
		return studioCall(t, creds.AgentStudioURL, method, path, header, key, body)
	}
	waitFired := func(ruleID string) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second) // the schedule is an hour away
		for time.Now().Before(deadline) {
			mu.Lock()
			n := triggered[ruleID]
			mu.Unlock()
			if n > 0 {
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
		t.Fatalf("rule %s never fired", ruleID)
	}
	call("POST", "/v1/webhook-endpoints", "x-api-key", acct.APIKey,
		`{"name":"local","url":"`+receiver.URL+`/hook","event_types":["alerts.triggered"]}`)
	project := acct.Projects[0].ProjectID
	rule := call("POST", "/v1/alert-rules", "x-api-key", acct.APIKey,
		`{"name":"errors","project_id":"`+project+`","metric":"function_errors","operator":">=","threshold_value":2,"window_duration":"5m"}`)["id"].(string)
	event := fmt.Sprintf(`{"events":[{"account_id":%q,"project_id":%q,"metric":"function_errors","value":2,"at":%q}]}`,
		acct.AccountID, project, time.Now().UTC().Format(time.RFC3339Nano))
	call("POST", "/internal/v1/metric-events", "X-Internal-Key", creds.InternalKey, event)
	waitFired(rule)
	got := call("GET", "/v1/alert-rules/"+rule, "x-api-key", acct.APIKey, "")
	if got["current_state"] != "alert" || got["current_value"] != float64(2) {
		t.Errorf("rule after the event: %v", got)
	}
	// A new rule on the same, already breaching scope fires on creation.
	second := call("POST", "/v1/alert-rules", "x-api-key", acct.APIKey,
		`{"name":"errors 1","project_id":"`+project+`","metric":"function_errors","operator":">=","threshold_value":1,"window_duration":"5m"}`)["id"].(string)
	waitFired(second)
	mu.Lock()
	defer mu.Unlock()
	if triggered[rule] != 1 || triggered[second] != 1 {
		t.Errorf("triggered deliveries %v, want one per rule", triggered)
	}
}
