package voiceops

import (
	"slices"
	"testing"
	"time"
)

// TestSilenceHoldsBackEvents walks a rule through silences: changes under
// one are recorded (marked silenced) and send nothing; the first
// evaluation outside one sends the event the receivers missed, or none
// when the rule came back to the state they know.
func TestSilenceHoldsBackEvents(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	breach, calm := Outcome{Value: 11}, Outcome{Value: 1}
	silenced := func(o Outcome) Outcome { o.Silenced = true; return o }
	type step struct {
		o      Outcome
		state  State
		event  EventType // "" = none
		change bool      // a history entry
	}
	cases := map[string][]step{
		"fires under a silence, still fires when it ends": {
			{silenced(breach), StateAlert, "", true},
			{silenced(breach), StateAlert, "", false},
			{breach, StateAlert, EventTriggered, false},
			{breach, StateAlert, "", false},
			{calm, StateOK, EventResolved, true},
		},
		"fires and resolves inside a silence": {
			{silenced(breach), StateAlert, "", true},
			{silenced(calm), StateOK, "", true},
			{calm, StateOK, "", false},
			{breach, StateAlert, EventTriggered, true},
		},
		"fired before, resolves under a silence": {
			{breach, StateAlert, EventTriggered, true},
			{silenced(calm), StateOK, "", true},
			{calm, StateOK, EventResolved, false},
		},
		"fires under a silence, resolves as it ends": {
			{silenced(breach), StateAlert, "", true},
			{calm, StateOK, "", true},
		},
	}
	for name, steps := range cases {
		r := NewRule("ar_1", "acct", RuleInput{Name: "n", Metric: MetricAPIErrors, Operator: OpGreater, Threshold: 10, Window: Window5m}, t0)
		for i, s := range steps {
			at := t0.Add(time.Duration(i+1) * time.Minute)
			next, ev := r.Evaluated(s.o, at)
			var typ EventType
			if ev != nil {
				typ = ev.Type
			}
			if next.State != s.state || typ != s.event || (next.Change != nil) != s.change {
				t.Fatalf("%s, step %d: state %s, event %q, change %v; want %s, %q, %v", name, i, next.State, typ, next.Change != nil, s.state, s.event, s.change)
			}
			if next.Change != nil && next.Change.Silenced != s.o.Silenced {
				t.Errorf("%s, step %d: history entry silenced=%v", name, i, next.Change.Silenced)
			}
			if ev != nil && !r.EvaluationChanged(next) {
				t.Errorf("%s, step %d: an event without a write", name, i)
			}
			r = next
		}
	}
}

func TestSilenceCovers(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	proj := "proj_1"
	projectRule := NewRule("ar_p", "acct", RuleInput{Name: "p", ProjectID: &proj, Metric: MetricAPIErrors, Operator: OpGreater, Window: Window5m}, t0)
	accountRule := NewRule("ar_a", "acct", RuleInput{Name: "a", Metric: MetricCallCrashes, Operator: OpGreater, Window: Window5m}, t0)
	str := func(s string) *string { return &s }
	sil := func(ms ...SilenceMatcher) Silence {
		return Silence{AccountID: "acct", Matchers: ms, StartsAt: t0, EndsAt: t0.Add(time.Hour)}
	}
	cases := []struct {
		name             string
		s                Silence
		at               time.Time
		project, account bool
	}{
		{"no matcher: every rule", sil(), t0, true, true},
		{"before its start", sil(), t0.Add(-time.Millisecond), false, false},
		{"at its end", sil(), t0.Add(time.Hour), false, false},
		{"rule_id", sil(SilenceMatcher{MatchRuleID, str("ar_p")}), t0, true, false},
		{"project_id", sil(SilenceMatcher{MatchProjectID, &proj}), t0, true, false},
		{"project_id null: account-wide rules", sil(SilenceMatcher{MatchProjectID, nil}), t0, false, true},
		{"metric", sil(SilenceMatcher{MatchMetric, str(string(MetricCallCrashes))}), t0, false, true},
		{"every matcher must match", sil(SilenceMatcher{MatchRuleID, str("ar_p")}, SilenceMatcher{MatchMetric, str(string(MetricCallCrashes))}), t0, false, false},
	}
	for _, c := range cases {
		if got := c.s.Covers(projectRule, c.at); got != c.project {
			t.Errorf("%s: covers the project's rule: %v", c.name, got)
		}
		if got := c.s.Covers(accountRule, c.at); got != c.account {
			t.Errorf("%s: covers the account-wide rule: %v", c.name, got)
		}
	}
	other := sil()
	other.AccountID = "acct_other"
	if other.Covers(projectRule, t0) {
		t.Error("a silence of another account covers the rule")
	}
}

func TestCheckSilenceTimes(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	day := 24 * time.Hour
	cases := []struct {
		starts, ends time.Time
		bad          bool
	}{
		{now, now.Add(time.Hour), false},
		{now.Add(-time.Hour), now.Add(time.Hour), false},
		{now, now.Add(90 * day), false},
		{now, now, true},
		{now.Add(time.Hour), now.Add(time.Minute), true},
		{now.Add(-2 * time.Hour), now.Add(-time.Hour), true},
		{now, now.Add(90*day + time.Millisecond), true},
		{now.Add(-10 * day), now.Add(85 * day), true},
	}
	for _, c := range cases {
		errs := CheckSilenceTimes(c.starts, c.ends, now)
		if (len(errs) > 0) != c.bad {
			t.Errorf("%v..%v: %v", c.starts, c.ends, errs)
		}
		if len(errs) > 0 && errs[0].Field != "ends_at" {
			t.Errorf("%v..%v: names %s", c.starts, c.ends, errs[0].Field)
		}
	}
}

// TestWakeScopes: an end wakes the scope of each enabled rule the silence
// selects, once, in the order of the rules; disabled, unselected and
// other accounts' rules wake nothing.
func TestWakeScopes(t *testing.T) {
	p1, p2 := "p1", "p2"
	rule := func(id, account string, project *string, m Metric, enabled bool) AlertRule {
		return AlertRule{ID: id, AccountID: account, ProjectID: project, Metric: m, Enabled: enabled}
	}
	rules := []AlertRule{
		rule("ar_1", "acct_a", &p1, MetricAPIErrors, true),
		rule("ar_2", "acct_a", nil, MetricAPIErrors, true),
		rule("ar_3", "acct_a", &p1, MetricAPIErrors, true), // p1 again
		rule("ar_4", "acct_a", &p2, MetricAPIErrors, false),
		rule("ar_5", "acct_a", &p2, MetricCallCrashes, true),
		rule("ar_6", "acct_b", &p2, MetricAPIErrors, true),
	}
	apiErrors, wide := string(MetricAPIErrors), "ar_2"
	for _, c := range []struct {
		name string
		sil  Silence
		want []string
	}{
		{"by metric", Silence{AccountID: "acct_a", Matchers: []SilenceMatcher{{Name: MatchMetric, Value: &apiErrors}}}, []string{"p1", ""}},
		{"by rule", Silence{AccountID: "acct_a", Matchers: []SilenceMatcher{{Name: MatchRuleID, Value: &wide}}}, []string{""}},
		{"every rule", Silence{AccountID: "acct_a"}, []string{"p1", "", "p2"}},
		{"by a project of disabled rules only", Silence{AccountID: "acct_a", Matchers: []SilenceMatcher{{Name: MatchProjectID, Value: &p2}, {Name: MatchMetric, Value: &apiErrors}}}, nil},
	} {
		if got := c.sil.WakeScopes(rules); !slices.Equal(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
