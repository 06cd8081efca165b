package apitest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/metrics"
)

// TestRuleChangeWakesTheEvaluator: the HTTP tests run the functions'
// graphs (shared/alerts/alertgraph, evalgraph), so a created or changed rule's
// scope is touched on the metric data's stream and evaluated at once, and
// the reads show the evaluator's marks as last_evaluated_at.
func TestRuleChangeWakesTheEvaluator(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	scope := metrics.Scope{AccountID: "acct_a", ProjectID: "proj_a1"}
	addErrors(t, h.metrics, h.clock.Now(), 3) // breaching data before the rule exists
	if got, st := h.deliverStream(); !slices.Contains(got, scope) || st.Rules != 0 {
		t.Fatalf("stream before any rule: %v %+v, want the data's scopes and no rule", got, st)
	}

	// Creating the rule wakes the evaluator for its scope: nothing else
	// is on the stream.
	h.clock.Advance(10 * time.Second)
	rule := with(validRule(), "metric", "api_errors", "threshold_value", 1, "project_id", "proj_a1")
	id := h.do("POST", "/v1/alert-rules", h.keyA, rule).Expect(t, 201).JSON(t)["id"].(string)
	got, st := h.deliverStream()
	if !slices.Equal(got, []metrics.Scope{scope}) || st.Rules != 1 || st.Events != 1 || st.Marks != 1 {
		t.Fatalf("stream after the create: %v %+v, want the rule's scope, one rule evaluated, one event, one mark", got, st)
	}
	r := h.do("GET", "/v1/alert-rules/"+id, h.keyA, nil).Expect(t, 200).JSON(t)
	if r["current_state"] != "alert" || r["current_value"] != float64(3) || r["last_evaluated_at"] != "2026-11-22T10:00:10.000Z" {
		t.Errorf("rule after the wake-up: %v, want alert at 3, evaluated at 10:00:10", r)
	}
	h.fanMu.Lock()
	fanned := len(h.fanned)
	h.fanMu.Unlock()
	if fanned != 1 || h.fanned[0].Type != "alerts.triggered" || h.fanned[0].RuleID != id {
		t.Errorf("fanned out %+v, want the rule's alerts.triggered", h.fanned)
	}

	// Data that changes nothing: the rule is not rewritten, and the read
	// shows the scope's mark.
	h.clock.Advance(20 * time.Second)
	addErrors(t, h.metrics, h.clock.Now(), 0) // activity only
	if _, st := h.deliverStream(); st.Rules != 1 || st.Unchanged != 1 || st.Marks != 1 || st.Events != 0 {
		t.Fatalf("second evaluation: %+v, want one unchanged rule and a mark", st)
	}
	stored, err := h.stores.Rules.GetRule(ctx, "acct_a", id)
	if err != nil {
		t.Fatal(err)
	}
	if stored.LastEvaluatedAt == nil || !stored.LastEvaluatedAt.Equal(time.Date(2026, 11, 22, 10, 0, 10, 0, time.UTC)) {
		t.Errorf("stored rule evaluated at %v, want its first evaluation (not rewritten)", stored.LastEvaluatedAt)
	}
	if r := h.do("GET", "/v1/alert-rules/"+id, h.keyA, nil).Expect(t, 200).JSON(t); r["last_evaluated_at"] != "2026-11-22T10:00:30.000Z" {
		t.Errorf("last_evaluated_at %v, want the mark's 10:00:30", r["last_evaluated_at"])
	}
	if list := h.do("GET", "/v1/alert-rules", h.keyA, nil).Expect(t, 200).JSON(t)["data"].([]any); len(list) != 1 ||
		list[0].(map[string]any)["last_evaluated_at"] != "2026-11-22T10:00:30.000Z" {
		t.Errorf("list: %v, want the rule with the mark's time", list)
	}

	// A change wakes it again; another account's rule wakes its own scope.
	h.do("PATCH", "/v1/alert-rules/"+id, h.keyA, map[string]any{"threshold_value": 5}).Expect(t, 200)
	h.do("POST", "/v1/alert-rules", h.keyB, validRule()).Expect(t, 201)
	if got, _ := h.deliverStream(); !slices.Equal(got, []metrics.Scope{scope, {AccountID: "acct_b"}}) {
		t.Errorf("stream after a change and another account's create: %v", got)
	}
}
