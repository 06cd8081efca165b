package studioapi

import (
	"net/http/httptest"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/platform/httpapi"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// TestRuleBodyAsEncodingJSON: writeRule and writeRules answer what
// WriteJSON of ruleJSON and of their list answers, byte for byte, for rules with every optional field
// set and unset and names that need escaping.
func TestRuleBodyAsEncodingJSON(t *testing.T) {
	at := time.Date(2026, 11, 28, 13, 4, 5, 678901234, time.FixedZone("X", -5*3600))
	later := at.Add(90 * time.Minute)
	pid, v, neg := "proj_a1", int64(1500), int64(-7)
	names := []string{"p95 too slow", `quo"te\`, "<b>&amp;</b>", "tab\tnl\n\x01\x7f", "é 日本 😀", "bad\xffutf8", "sep\u2028\u2029", ""}
	var rules []voiceops.AlertRule
	for i, name := range names {
		r := voiceops.AlertRule{ID: "ar_" + name, AccountID: "acct_a", Name: name, Metric: voiceops.Metrics[i%len(voiceops.Metrics)],
			Operator: voiceops.Operators[i%len(voiceops.Operators)], Threshold: int64(i) * 1000003, Window: voiceops.Windows[i%len(voiceops.Windows)],
			Enabled: i%2 == 0, State: voiceops.States[i%len(voiceops.States)], CreatedAt: at, UpdatedAt: later.Add(time.Duration(i) * time.Millisecond)}
		if i%2 == 1 {
			r.ProjectID, r.Since, r.LastEvaluatedAt, r.CurrentValue = &pid, &at, &later, &v
		}
		if i == 3 {
			r.CurrentValue = &neg
		}
		rules = append(rules, r)
	}
	// The same rules, each also enabled and in alert (the list's items).
	var alerting []voiceops.AlertRule
	for _, r := range rules {
		a := r
		a.Enabled, a.State = true, voiceops.StateAlert
		alerting = append(alerting, r, a)
	}
	for name, match := range map[string]func(voiceops.AlertRule) bool{
		"all": func(voiceops.AlertRule) bool { return true }, "none": func(voiceops.AlertRule) bool { return false },
		"enabled": func(r voiceops.AlertRule) bool { return r.Enabled },
	} {
		want, got := httptest.NewRecorder(), httptest.NewRecorder()
		out := listJSON[ruleJSON]{Data: make([]ruleJSON, 0, len(rules))}
		for _, r := range rules {
			if match(r) {
				out.Data = append(out.Data, toRuleJSON(r))
			}
		}
		httpapi.WriteJSON(want, 200, out)
		writeRules(got, rules, match)
		if got.Body.String() != want.Body.String() || got.Code != want.Code || got.Header().Get("Content-Type") != want.Header().Get("Content-Type") {
			t.Errorf("list of %s:\n got %d %s %s\nwant %d %s %s", name, got.Code, got.Header(), got.Body, want.Code, want.Header(), want.Body)
		}
	}
	// GET /v1/alerts: the rules enabled and in alert among those that match.
	for name, match := range map[string]func(voiceops.AlertRule) bool{
		"all": func(voiceops.AlertRule) bool { return true }, "none": func(voiceops.AlertRule) bool { return false },
		"with a project": func(r voiceops.AlertRule) bool { return r.ProjectID != nil },
	} {
		want, got := httptest.NewRecorder(), httptest.NewRecorder()
		out := listJSON[activeAlertJSON]{Data: []activeAlertJSON{}}
		for _, r := range alerting {
			if r.Enabled && r.State == voiceops.StateAlert && match(r) {
				out.Data = append(out.Data, fromRecord[activeAlertJSON](r))
			}
		}
		httpapi.WriteJSON(want, 200, out)
		writeActiveAlerts(got, alerting, match)
		if got.Body.String() != want.Body.String() || got.Code != want.Code || got.Header().Get("Content-Type") != want.Header().Get("Content-Type") {
			t.Errorf("active alerts, %s:\n got %d %s %s\nwant %d %s %s", name, got.Code, got.Header(), got.Body, want.Code, want.Header(), want.Body)
		}
		if name == "all" && len(out.Data) < 4 {
			t.Errorf("the test's rules hold %d active alerts, want some of each shape", len(out.Data))
		}
	}
	for _, r := range rules {
		want, got := httptest.NewRecorder(), httptest.NewRecorder()
		httpapi.WriteJSON(want, 201, toRuleJSON(r))
		writeRule(got, 201, r)
		if got.Body.String() != want.Body.String() || got.Code != want.Code || got.Header().Get("Content-Type") != want.Header().Get("Content-Type") {
			t.Errorf("rule %q:\n got %d %s %s\nwant %d %s %s", r.Name, got.Code, got.Header(), got.Body, want.Code, want.Header(), want.Body)
		}
	}
}
