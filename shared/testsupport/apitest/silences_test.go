package apitest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/metrics"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// Our addition: POST, GET and DELETE /v1/silences, and the evaluator
// holding back what they cover. Every response is checked against the
// OpenAPI document by the harness.

func silenceBody(kv ...any) map[string]any {
	return with(map[string]any{"ends_at": "2026-11-22T11:00:00Z", "comment": "carrier maintenance",
		"matchers": []any{map[string]any{"name": "project_id", "value": "proj_a1"}}}, kv...)
}

func (h *harness) silences(key string) []any {
	h.t.Helper()
	return h.do("GET", "/v1/silences", key, nil).Expect(h.t, 200).JSON(h.t)["data"].([]any)
}

func TestSilencesCreateListEnd(t *testing.T) {
	h := newHarness(t)
	ruleB := h.do("POST", "/v1/alert-rules", h.keyB, validRule()).Expect(t, 201).JSON(t)["id"].(string)
	ruleA := h.do("POST", "/v1/alert-rules", h.keyA, validRule()).Expect(t, 201).JSON(t)["id"].(string)
	created := h.do("POST", "/v1/silences", h.keyA, silenceBody("matchers", []any{
		map[string]any{"name": "rule_id", "value": ruleA}, map[string]any{"name": "metric", "value": "turn_latency_p95"},
	})).Expect(t, 201).JSON(t)
	if created["starts_at"] != "2026-11-22T10:00:00.000Z" || created["ends_at"] != "2026-11-22T11:00:00.000Z" ||
		created["created_at"] != "2026-11-22T10:00:00.000Z" || created["comment"] != "carrier maintenance" || len(created["matchers"].([]any)) != 2 {
		t.Errorf("created %v", created)
	}
	h.clock.Advance(time.Second)
	accountWide := h.do("POST", "/v1/silences", h.keyA, silenceBody("matchers", []any{map[string]any{"name": "project_id", "value": nil}},
		"starts_at", "2026-11-22T10:30:00+01:00", "comment", deleteField)).Expect(t, 201).JSON(t)
	if accountWide["starts_at"] != "2026-11-22T09:30:00.000Z" || accountWide["comment"] != "" {
		t.Errorf("a silence from the past, without a comment: %v", accountWide)
	}
	if got := h.silences(h.keyA); len(got) != 2 || got[0].(map[string]any)["id"] != created["id"] {
		t.Fatalf("list %v", got)
	}
	if got := h.silences(h.keyB); len(got) != 0 {
		t.Errorf("acct_b sees %v", got)
	}

	// Bad input: 422 naming the field, nothing stored.
	for _, c := range []struct {
		name  string
		body  any
		field string
	}{
		{"ends before it starts", silenceBody("starts_at", "2026-11-22T10:30:00Z", "ends_at", "2026-11-22T10:20:00Z"), "ends_at"},
		{"longer than 90 days", silenceBody("ends_at", "2027-02-21T10:00:00.001Z"), "ends_at"},
		{"in the past", silenceBody("starts_at", "2026-11-22T08:00:00Z", "ends_at", "2026-11-22T09:00:00Z"), "ends_at"},
		{"no end", silenceBody("ends_at", deleteField), "ends_at"},
		{"not a time", silenceBody("starts_at", "tomorrow"), "starts_at"},
		{"another account's rule", silenceBody("matchers", []any{map[string]any{"name": "rule_id", "value": ruleB}}), "matchers[0].value"},
		{"another account's project", silenceBody("matchers", []any{map[string]any{"name": "project_id", "value": "proj_b1"}}), "matchers[0].value"},
		{"a malformed rule ID", silenceBody("matchers", []any{map[string]any{"name": "rule_id", "value": "nope"}}), "matchers[0].value"},
		{"an unknown metric", silenceBody("matchers", []any{map[string]any{"name": "metric", "value": "cpu"}}), "matchers[0].value"},
		{"null but for project_id", silenceBody("matchers", []any{map[string]any{"name": "rule_id", "value": nil}}), "matchers[0].value"},
		{"an unknown name", silenceBody("matchers", []any{map[string]any{"name": "severity", "value": "high"}}), "matchers[0].name"},
		{"a name twice", silenceBody("matchers", []any{map[string]any{"name": "metric", "value": "api_errors"}, map[string]any{"name": "metric", "value": "call_crashes"}}), "matchers[1].name"},
		{"a matcher without value", silenceBody("matchers", []any{map[string]any{"name": "metric"}}), "matchers[0].value"},
		{"a matcher's unknown field", silenceBody("matchers", []any{map[string]any{"name": "metric", "value": "api_errors", "regex": true}}), "matchers[0].regex"},
		{"matchers not a list", silenceBody("matchers", map[string]any{"rule_id": ruleA}), "matchers"},
		{"no matchers", silenceBody("matchers", deleteField), "matchers"},
		{"a long comment", silenceBody("comment", string(make([]byte, 1025))), "comment"},
		{"an unknown field", silenceBody("created_by", "me"), "created_by"},
	} {
		r := h.do("POST", "/v1/silences", h.keyA, c.body).Expect(t, 422)
		if f := r.FieldErrors(t); !slices.Contains(f, c.field) {
			t.Errorf("%s: errors name %v, want %s", c.name, f, c.field)
		}
	}
	// The matchers' lookups run beside the rest: every error at once, in
	// body order, whether other fields are wrong (no store call) or not
	// (the store waits for the lookups before writing).
	strangers := []any{map[string]any{"name": "rule_id", "value": ruleB}, map[string]any{"name": "project_id", "value": "proj_b1"}}
	for _, c := range []struct {
		name string
		body any
		want []string
	}{
		{"only lookups fail", silenceBody("matchers", strangers), []string{"matchers[0].value", "matchers[1].value"}},
		{"lookups and other fields fail", silenceBody("matchers", strangers, "starts_at", "tomorrow", "comment", string(make([]byte, 1025)), "x", 1),
			[]string{"matchers[0].value", "matchers[1].value", "starts_at", "comment", "x"}},
		{"a lookup and its matcher's own field fail", silenceBody("matchers", []any{map[string]any{"name": "project_id", "value": "proj_b1", "regex": true}}, "ends_at", "soon"),
			[]string{"matchers[0].value", "matchers[0].regex", "ends_at"}},
	} {
		if f := h.do("POST", "/v1/silences", h.keyA, c.body).Expect(t, 422).FieldErrors(t); !slices.Equal(f, c.want) {
			t.Errorf("%s: errors name %v, want %v", c.name, f, c.want)
		}
	}
	if got := h.silences(h.keyA); len(got) != 2 {
		t.Fatalf("after the bad requests, %d silences", len(got))
	}

	// DELETE: a malformed ID is 422, another account's or an unknown one 404.
	h.do("DELETE", "/v1/silences/nope", h.keyA, nil).Expect(t, 422)
	h.do("DELETE", "/v1/silences/sil_unknown", h.keyA, nil).Expect(t, 404)
	h.do("DELETE", "/v1/silences/"+created["id"].(string), h.keyB, nil).Expect(t, 404)
	h.clock.Advance(time.Minute)
	h.do("DELETE", "/v1/silences/"+created["id"].(string), h.keyA, nil).Expect(t, 204)
	got := h.silences(h.keyA)
	if len(got) != 2 || got[0].(map[string]any)["ends_at"] != "2026-11-22T10:01:01.000Z" {
		t.Errorf("after DELETE: %v, want it ended now and still listed", got)
	}
	h.do("DELETE", "/v1/silences/"+created["id"].(string), h.keyA, nil).Expect(t, 204) // ended already: unchanged
	// Listed for 30 days after its end, then gone.
	h.clock.Advance(voiceops.SilenceRetention)
	if got := h.silences(h.keyA); len(got) != 1 {
		t.Errorf("30 days after the end: %v", got)
	}
}

func TestSilenceLimit(t *testing.T) {
	h := newHarness(t)
	var last string
	for i := range voiceops.MaxActiveSilences {
		h.clock.Advance(100 * time.Millisecond) // within the key's rate limit
		// Each starts later: DELETE removes one not started yet.
		last = h.do("POST", "/v1/silences", h.keyA, silenceBody("comment", fmt.Sprint(i), "starts_at", "2026-11-22T10:30:00Z")).Expect(t, 201).JSON(t)["id"].(string)
	}
	r := h.do("POST", "/v1/silences", h.keyA, silenceBody()).Expect(t, 409)
	if msg := r.JSON(t)["message"]; msg != voiceops.ErrSilenceLimit.Message {
		t.Errorf("409 says %q", msg)
	}
	h.do("POST", "/v1/silences", h.keyB, silenceBody("matchers", []any{})).Expect(t, 201) // another account's own limit
	// A silence not started yet is removed by DELETE, which frees its place.
	h.do("DELETE", "/v1/silences/"+last, h.keyA, nil).Expect(t, 204)
	h.do("POST", "/v1/silences", h.keyA, silenceBody()).Expect(t, 201)
	if n := len(h.silences(h.keyA)); n != voiceops.MaxActiveSilences {
		t.Errorf("%d silences listed", n)
	}
}

// TestSilenceHoldsBackTheAlert is the walk: a breach on a silenced
// rule is recorded and sends nothing; ending the silence while it still
// fires wakes the rule's scope, whose evaluation sends one alerts.triggered
// (the scheduled runs after it, nothing more).
func TestSilenceHoldsBackTheAlert(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	rule := h.do("POST", "/v1/alert-rules", h.keyA, with(validRule(), "project_id", "proj_a1", "metric", "api_errors", "operator", ">=",
		"threshold_value", 1)).Expect(t, 201).JSON(t)["id"].(string)
	h.deliverStream() // the create's wake-up
	sil := h.do("POST", "/v1/silences", h.keyA, silenceBody()).Expect(t, 201).JSON(t)["id"].(string)
	h.clock.Advance(time.Second)
	if err := h.deps.Metrics.Record(ctx, metrics.Count(metrics.APIErrors, "acct_a", "proj_a1", h.clock.Now())); err != nil {
		t.Fatal(err)
	}
	if _, st := h.deliverStream(); st.Silenced != 1 || st.Events != 0 || st.SilenceReads != 1 {
		t.Fatalf("the breach's evaluation: %+v", st)
	}
	if got := h.do("GET", "/v1/alert-rules/"+rule, h.keyA, nil).Expect(t, 200).JSON(t)["current_state"]; got != "alert" {
		t.Fatalf("state %v, want alert", got)
	}
	hist := h.do("GET", "/v1/alert-rules/"+rule+"/history", h.keyA, nil).Expect(t, 200).JSON(t)["data"].([]any)
	if newest := hist[0].(map[string]any); newest["to_state"] != "alert" || newest["silenced"] != true || newest["event_id"] != nil {
		t.Fatalf("history %v, want the change to alert marked silenced, with no event", hist)
	}
	if len(h.fanned) != 0 {
		t.Fatalf("fanned out under the silence: %v", h.fanned)
	}
	h.clock.Advance(30 * time.Second)
	h.do("DELETE", "/v1/silences/"+sil, h.keyA, nil).Expect(t, 204)
	// The DELETE wakes the rule's scope: its evaluation, on the stream,
	// sends one alerts.triggered without waiting for the schedule.
	if scopes, st := h.deliverStream(); len(scopes) != 1 || st.Events != 1 {
		t.Fatalf("the DELETE's wake-up: scopes %v, %+v; want the rule's scope sending one event", scopes, st)
	}
	if len(h.fanned) != 1 || h.fanned[0].Type != voiceops.EventTriggered || h.fanned[0].RuleID != rule {
		t.Fatalf("after the silence: %v, want one alerts.triggered", h.fanned)
	}
	// The scheduled runs after it send nothing more.
	for range 2 {
		h.clock.Advance(30 * time.Second)
		if _, err := h.evaluator.RunShard(ctx, voiceops.RuleShardOf("acct_a")); err != nil {
			t.Fatal(err)
		}
	}
	if len(h.fanned) != 1 {
		t.Fatalf("after the scheduled runs: %v, want the one alerts.triggered", h.fanned)
	}
}
