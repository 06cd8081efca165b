//go:build stack

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/alerts/notify/vendorformat"
)

// The silences and the vendor endpoint kinds on the stack: the evaluator
// on its stream and schedule, the dispatcher on its queue, the endpoints'
// URLs loopback stand-ins (the scenarios' -allow-loopback-webhooks).

// ruleOn creates a rule of the account's first project on a metric no
// other scenario posts (so that no data of theirs breaches it), and
// deletes it when the test ends.
func ruleOn(t *testing.T, acct AccountCredentials, name, metric string, enabled bool) string {
	t.Helper()
	studio, key := st.Credentials.AgentStudioURL, map[string]string{"x-api-key": acct.APIKey}
	var rule struct{ ID string }
	if code, _, b := call(t, "POST", studio+"/v1/alert-rules", key, map[string]any{
		"name": name, "project_id": acct.Projects[0].ProjectID, "metric": metric, "operator": ">=", "threshold_value": 3,
		"window_duration": "5m", "enabled": enabled,
	}, &rule); code != http.StatusCreated {
		t.Fatalf("creating rule %s: %d %s", name, code, b)
	}
	t.Cleanup(func() { call(t, "DELETE", studio+"/v1/alert-rules/"+rule.ID, key, nil, nil) })
	return rule.ID
}

// patchRule patches a rule and fails the test unless it answers 200.
func patchRule(t *testing.T, acct AccountCredentials, ruleID string, patch map[string]any) {
	t.Helper()
	if code, _, b := call(t, "PATCH", st.Credentials.AgentStudioURL+"/v1/alert-rules/"+ruleID, map[string]string{"x-api-key": acct.APIKey}, patch, nil); code != 200 {
		t.Fatalf("PATCH %s: %d %s", ruleID, code, b)
	}
}

// postCounts posts count events (metric → value) of the account's first
// project through the internal metric intake, in one request.
func postCounts(t *testing.T, acct AccountCredentials, values map[string]int) {
	t.Helper()
	var evs []map[string]any
	for m, v := range values {
		evs = append(evs, map[string]any{"account_id": acct.AccountID, "project_id": acct.Projects[0].ProjectID, "metric": m, "value": v,
			"at": time.Now().UTC().Format(time.RFC3339)})
	}
	if code, _, b := call(t, "POST", st.Credentials.AgentStudioURL+"/internal/v1/metric-events", map[string]string{"X-Internal-Key": st.Credentials.InternalKey},
		map[string]any{"events": evs}, nil); code/100 != 2 {
		t.Fatalf("metric intake: %d %s", code, b)
	}
}

// silenceRule silences one rule for an hour and returns the silence's ID.
func silenceRule(t *testing.T, acct AccountCredentials, ruleID string) string {
	t.Helper()
	var sil struct{ ID string }
	if code, _, b := call(t, "POST", st.Credentials.AgentStudioURL+"/v1/silences", map[string]string{"x-api-key": acct.APIKey}, map[string]any{
		"matchers": []map[string]any{{"name": "rule_id", "value": ruleID}},
		"ends_at":  time.Now().Add(time.Hour).UTC().Format(time.RFC3339), "comment": "stack scenario",
	}, &sil); code != http.StatusCreated {
		t.Fatalf("creating the silence: %d %s", code, b)
	}
	return sil.ID
}

// waitState polls a rule until its current_state is want.
func waitState(t *testing.T, acct AccountCredentials, ruleID, want string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		var r struct {
			State string `json:"current_state"`
		}
		if code, _, b := call(t, "GET", st.Credentials.AgentStudioURL+"/v1/alert-rules/"+ruleID, map[string]string{"x-api-key": acct.APIKey}, nil, &r); code != 200 {
			t.Fatalf("GET rule: %d %s", code, b)
		}
		if r.State == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("rule %s is %s after %s, want %s", ruleID, r.State, within, want)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// historyChange is an entry of a rule's history.
type historyChange struct {
	ToState  string  `json:"to_state"`
	EventID  *string `json:"event_id"`
	Silenced bool    `json:"silenced"`
}

// history is a rule's history, newest first.
func history(t *testing.T, acct AccountCredentials, ruleID string) []historyChange {
	t.Helper()
	var h struct{ Data []historyChange }
	if code, _, b := call(t, "GET", st.Credentials.AgentStudioURL+"/v1/alert-rules/"+ruleID+"/history", map[string]string{"x-api-key": acct.APIKey}, nil, &h); code != 200 || len(h.Data) == 0 {
		t.Fatalf("history of %s: %d %s", ruleID, code, b)
	}
	return h.Data
}

// loggedDelivery is an entry of an endpoint's delivery log.
type loggedDelivery struct {
	EventID string `json:"event_id"`
	Status  string `json:"status"`
}

// deliveryLog is an endpoint's delivery log.
func deliveryLog(t *testing.T, acct AccountCredentials, endpointID string) []loggedDelivery {
	t.Helper()
	var log struct{ Data []loggedDelivery }
	if code, _, b := call(t, "GET", st.Credentials.AgentStudioURL+"/v1/webhook-endpoints/"+endpointID+"/deliveries", map[string]string{"x-api-key": acct.APIKey}, nil, &log); code != 200 {
		t.Fatalf("delivery log: %d %s", code, b)
	}
	return log.Data
}

// ruleOf is the rule ID of a delivered event body.
func ruleOf(d delivery) string {
	var ev struct {
		Alert struct{ ID string } `json:"alert"`
	}
	_ = json.Unmarshal(d.Body, &ev)
	return ev.Alert.ID
}

// deliveriesOfRules collects the receiver's deliveries for a while and
// lists those of the rules as "rule event_type" (another scenario's rule
// of the account may deliver to the same receiver meanwhile).
func deliveriesOfRules(rc *receiver, d time.Duration, rules ...string) []string {
	var out []string
	deadline := time.After(d)
	for {
		select {
		case x := <-rc.got:
			if slices.Contains(rules, ruleOf(x)) {
				out = append(out, ruleOf(x)+" "+x.EventType)
			}
		case <-deadline:
			return out
		}
	}
}

// eventsOf lists the event IDs of a rule's history, newest first.
func eventsOf(t *testing.T, acct AccountCredentials, ruleID string) []string {
	t.Helper()
	var out []string
	for _, c := range history(t, acct, ruleID) {
		if c.EventID != nil {
			out = append(out, *c.EventID)
		}
	}
	return out
}

// A silence holds back a breach on the stack: the change is recorded,
// marked silenced, and nothing is delivered. Ending it (DELETE) while the
// rule still fires wakes the rule's scope: with the schedules paused, the
// stream alone evaluates it and one alerts.triggered arrives, signed; the
// scheduled runs after it send nothing more. A second rule, fired and
// resolved inside its own silence, sends nothing when that one ends.
func TestSilenceHoldsBackAndItsEndDeliversOnce(t *testing.T) {
	acct := st.Credentials.Accounts[0]
	studio, key := st.Credentials.AgentStudioURL, map[string]string{"x-api-key": acct.APIKey}
	rc, epID := receiverEndpoint(t, acct, "silences")
	// Created disabled, silenced, then enabled: no evaluation runs before
	// the silences exist.
	firing := ruleOn(t, acct, "Held back", "function_errors", false)
	flapping := ruleOn(t, acct, "Fires and resolves", "call_crashes", false)
	silFiring, silFlapping := silenceRule(t, acct, firing), silenceRule(t, acct, flapping)
	patchRule(t, acct, firing, map[string]any{"enabled": true})
	patchRule(t, acct, flapping, map[string]any{"enabled": true})

	postCounts(t, acct, map[string]int{"function_errors": 5, "call_crashes": 5})
	waitState(t, acct, firing, "alert", 20*time.Second)
	waitState(t, acct, flapping, "alert", 20*time.Second)
	for _, id := range []string{firing, flapping} {
		if c := history(t, acct, id)[0]; c.ToState != "alert" || !c.Silenced || c.EventID != nil {
			t.Fatalf("rule %s: newest change %+v, want to alert, silenced, no event", id, c)
		}
	}
	patchRule(t, acct, flapping, map[string]any{"threshold_value": 1000})
	waitState(t, acct, flapping, "ok", 20*time.Second)
	if c := history(t, acct, flapping)[0]; c.ToState != "ok" || !c.Silenced || c.EventID != nil {
		t.Fatalf("the resolution under the silence: %+v, want to ok, silenced, no event", c)
	}
	// A scheduled run (every 2 s here) or two under the silences: nothing
	// reaches the receiver or the delivery log.
	if got := deliveriesOfRules(rc, 3*time.Second, firing, flapping); len(got) != 0 {
		t.Fatalf("delivered under the silences: %v", got)
	}
	if log := deliveryLog(t, acct, epID); len(log) != 0 {
		t.Fatalf("delivery log under the silences: %+v, want none", log)
	}

	// Ending the silences with the schedules paused: only the DELETE's
	// wake-up (a touch of the scope, through the metrics stream) can
	// evaluate the rules now.
	st.PauseSchedules(true)
	t.Cleanup(func() { st.PauseSchedules(false) })
	ended := time.Now()
	for _, id := range []string{silFiring, silFlapping} {
		if code, _, b := call(t, "DELETE", studio+"/v1/silences/"+id, key, nil, nil); code != http.StatusNoContent {
			t.Fatalf("DELETE silence: %d %s", code, b)
		}
	}
	d := rc.next(t, "alerts.triggered", 15*time.Second)
	if d.Verified != nil {
		t.Fatalf("alerts.triggered not verified: %v", d.Verified)
	}
	if ruleOf(d) != firing {
		t.Fatalf("alerts.triggered of rule %s, want %s", ruleOf(d), firing)
	}
	t.Logf("silence ended → alerts.triggered received: %s, schedules paused", d.At.Sub(ended).Round(time.Millisecond))
	// The schedules run again: their evaluations send nothing more, and
	// nothing for the rule that fired and resolved inside its silence.
	st.PauseSchedules(false)
	if got := deliveriesOfRules(rc, 5*time.Second, firing, flapping); len(got) != 0 {
		t.Fatalf("after the one alerts.triggered: %v, want nothing more", got)
	}
	log := deliveryLog(t, acct, epID)
	if len(log) != 1 || log[0].EventID != d.EventID || log[0].Status != "delivered" {
		t.Fatalf("delivery log %+v, want the one alerts.triggered %s, delivered", log, d.EventID)
	}
}

// vendorStandIn is a local Slack incoming webhook or PagerDuty Events API:
// it checks each body against the vendor's format pinned in vendorformat
// (the unit tests' validators) and answers as the vendor does.
type vendorStandIn struct {
	kind    string
	mu      sync.Mutex
	invalid []string
	got     chan []byte
}

func newVendorStandIn(t *testing.T, kind string) (*vendorStandIn, string) {
	v := &vendorStandIn{kind: kind, got: make(chan []byte, 100)}
	srv := httptest.NewServer(v)
	t.Cleanup(srv.Close)
	return v, srv.URL
}

func (v *vendorStandIn) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var err error
	if v.kind == "slack" {
		err = vendorformat.ValidateSlack(body)
	} else {
		_, err = vendorformat.ValidatePagerDuty(body)
	}
	if err != nil {
		v.mu.Lock()
		v.invalid = append(v.invalid, fmt.Sprintf("%v: %s", err, body))
		v.mu.Unlock()
		http.Error(w, "invalid payload", http.StatusBadRequest)
		return
	}
	select { // never held when nobody reads (see receiver.ServeHTTP)
	case v.got <- body:
	case <-r.Context().Done():
		return
	}
	if v.kind == "slack" {
		_, _ = io.WriteString(w, "ok")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusAccepted)
	_, _ = io.WriteString(w, `{"status":"success","message":"Event processed"}`)
}

// next waits for the next valid body that contains want.
func (v *vendorStandIn) next(t *testing.T, want string, within time.Duration) []byte {
	t.Helper()
	deadline := time.After(within)
	for {
		select {
		case b := <-v.got:
			if strings.Contains(string(b), want) {
				return b
			}
		case <-deadline:
			v.mu.Lock()
			defer v.mu.Unlock()
			t.Fatalf("no %s payload with %q within %s (invalid ones: %q)", v.kind, want, within, v.invalid)
		}
	}
}

// A Slack and a PagerDuty endpoint pointed at loopback stand-ins receive,
// through the stack's dispatcher, payloads valid in their vendors' formats
// when a rule fires and resolves; PagerDuty's resolve carries the
// trigger's dedup key.
func TestSlackAndPagerDutyThroughTheDispatcher(t *testing.T) {
	acct := st.Credentials.Accounts[1]
	studio, key := st.Credentials.AgentStudioURL, map[string]string{"x-api-key": acct.APIKey}
	slack, slackURL := newVendorStandIn(t, "slack")
	pd, pdURL := newVendorStandIn(t, "pagerduty")
	const routingKey = "R0123456789ABCDEF0123456789abcde"
	var endpoints []string
	for _, body := range []map[string]any{
		{"name": "#ops", "kind": "slack", "url": slackURL + "/services/T0/B0/x", "event_types": []string{"alerts.triggered", "alerts.resolved"}},
		{"name": "on-call", "kind": "pagerduty", "url": pdURL + "/v2/enqueue", "routing_key": routingKey, "event_types": []string{"alerts.triggered", "alerts.resolved"}},
	} {
		var ep struct{ ID string }
		if code, _, b := call(t, "POST", studio+"/v1/webhook-endpoints", key, body, &ep); code != http.StatusCreated {
			t.Fatalf("creating the %s endpoint: %d %s", body["kind"], code, b)
		}
		t.Cleanup(func() { call(t, "DELETE", studio+"/v1/webhook-endpoints/"+ep.ID, key, nil, nil) })
		endpoints = append(endpoints, ep.ID)
	}
	rule := ruleOn(t, acct, "Function errors on the stack", "function_errors", true)
	postCounts(t, acct, map[string]int{"function_errors": 5})

	pdEvent := func(b []byte) vendorformat.PagerDutyEvent {
		e, err := vendorformat.ValidatePagerDuty(b)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	// The dedup key names the rule: voiceops:<rule_id>:<sequence>.
	trigger := pdEvent(pd.next(t, "voiceops:"+rule+":", 30*time.Second))
	if fired := slack.next(t, "Function errors on the stack", 30*time.Second); !strings.Contains(string(fired), "Firing: ") ||
		!strings.Contains(string(fired), "#/rules/"+rule) {
		t.Errorf("the Slack message of the firing: %s, want Firing and a console link to the rule", fired)
	}
	if trigger.EventAction != "trigger" || trigger.RoutingKey != routingKey || trigger.Payload == nil || trigger.Payload.Severity != "critical" {
		t.Errorf("PagerDuty trigger: %+v", trigger)
	}

	patchRule(t, acct, rule, map[string]any{"threshold_value": 1000})
	resolve := pdEvent(pd.next(t, "voiceops:"+rule+":", 30*time.Second))
	if resolve.EventAction != "resolve" || resolve.DedupKey != trigger.DedupKey {
		t.Errorf("PagerDuty after the resolution: %s %q, want resolve with the trigger's dedup key %q", resolve.EventAction, resolve.DedupKey, trigger.DedupKey)
	}
	if resolved := slack.next(t, "Function errors on the stack", 30*time.Second); !strings.Contains(string(resolved), "Resolved: ") {
		t.Errorf("the Slack message of the resolution: %s", resolved)
	}
	for _, v := range []*vendorStandIn{slack, pd} {
		v.mu.Lock()
		if len(v.invalid) > 0 {
			t.Errorf("%s payloads not in the vendor's format: %q", v.kind, v.invalid)
		}
		v.mu.Unlock()
	}
	// The rule's two events, each delivered at both endpoints.
	events := eventsOf(t, acct, rule)
	if len(events) != 2 {
		t.Fatalf("the rule's history names events %v, want the trigger and the resolve", events)
	}
	for _, id := range endpoints {
		deadline := time.Now().Add(10 * time.Second)
		for {
			delivered := 0
			for _, d := range deliveryLog(t, acct, id) {
				if slices.Contains(events, d.EventID) && d.Status == "delivered" {
					delivered++
				}
			}
			if delivered == len(events) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("delivery log of %s: %+v, want events %v delivered", id, deliveryLog(t, acct, id), events)
			}
			time.Sleep(300 * time.Millisecond)
		}
	}
}
