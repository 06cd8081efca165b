package evaluator

import (
	"context"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/metrics"
	"github.com/voiceops/opsapi/shared/voiceops"
)

func (f *fixture) silence(acct string, until time.Duration, ms ...voiceops.SilenceMatcher) voiceops.Silence {
	f.t.Helper()
	s := voiceops.Silence{ID: voiceops.NewID(voiceops.PrefixSilence), AccountID: acct, Matchers: ms,
		StartsAt: f.now.Add(-time.Minute), EndsAt: f.now.Add(until), CreatedAt: f.now}
	if err := f.stores.Silences.CreateSilence(context.Background(), s, f.now, nil); err != nil {
		f.t.Fatal(err)
	}
	return s
}

func (f *fixture) takeEvents() []voiceops.AlertEvent {
	f.mu.Lock()
	defer f.mu.Unlock()
	evs := f.events
	f.events = nil
	return evs
}

func (f *fixture) history(r voiceops.AlertRule) []voiceops.StateChange {
	f.t.Helper()
	cs, _, err := f.stores.History.RuleHistory(context.Background(), r.AccountID, r.ID, "", voiceops.MaxHistoryPage)
	if err != nil {
		f.t.Fatal(err)
	}
	return cs
}

// TestSilenceHoldsBackDeliveries: a breach of a silenced rule is recorded
// (history marked silenced) and sends nothing; ending the silence while it
// still fires sends one alerts.triggered at the next run; a rule that
// fires and resolves inside a silence sends nothing; an unsilenced rule
// beside them is delivered as ever. The silences are read once per account
// and run, whatever the number of rules.
func TestSilenceHoldsBackDeliveries(t *testing.T) {
	f := newFixture(t)
	silenced := f.rule("acct_a", "p1", voiceops.MetricAPIErrors, voiceops.OpGreaterEqual, 1, voiceops.Window5m)
	brief := f.rule("acct_a", "p2", voiceops.MetricAPIErrors, voiceops.OpGreaterEqual, 1, voiceops.Window5m)
	loud := f.rule("acct_a", "p1", voiceops.MetricCallCrashes, voiceops.OpGreaterEqual, 1, voiceops.Window5m)
	other := f.rule("acct_b", "", voiceops.MetricAPIErrors, voiceops.OpGreaterEqual, 1, voiceops.Window5m)
	sil := f.silence("acct_a", 30*time.Minute, voiceops.SilenceMatcher{Name: voiceops.MatchRuleID, Value: &silenced.ID})
	p2 := "p2"
	f.silence("acct_a", 30*time.Minute, voiceops.SilenceMatcher{Name: voiceops.MatchProjectID, Value: &p2})
	// A silence of acct_b that covers nothing of acct_a's.
	f.silence("acct_b", 30*time.Minute, voiceops.SilenceMatcher{Name: voiceops.MatchRuleID, Value: &silenced.ID})

	f.record("acct_a", "p1", metrics.APIErrors, 1, 0)
	f.record("acct_a", "p2", metrics.APIErrors, 1, 0)
	f.record("acct_a", "p1", metrics.CallCrashes, 1, 0)
	f.record("acct_b", "", metrics.APIErrors, 1, 0)
	st := f.run()
	if st.SilenceReads != 2 || st.Silenced != 2 || st.Rules != 4 {
		t.Errorf("stats %+v: want 2 silence reads (one per account), 2 rules silenced of 4", st)
	}
	got := map[string]voiceops.EventType{}
	for _, e := range f.takeEvents() {
		got[e.RuleID] = e.Type
	}
	if len(got) != 2 || got[loud.ID] != voiceops.EventTriggered || got[other.ID] != voiceops.EventTriggered {
		t.Fatalf("events %v: want alerts.triggered of the two unsilenced rules only", got)
	}
	for _, r := range []voiceops.AlertRule{silenced, brief} {
		if g := f.get(r); g.State != voiceops.StateAlert {
			t.Errorf("%s: state %s under the silence, want alert", r.Name, g.State)
		}
		h := f.history(r)
		if len(h) != 1 || !h[0].Silenced || h[0].EventID != "" || h[0].To != voiceops.StateAlert {
			t.Errorf("%s: history %+v, want one change to alert, marked silenced, no event", r.Name, h)
		}
	}

	// Still firing, still silenced: nothing.
	f.now = f.now.Add(30 * time.Second)
	f.record("acct_a", "p1", metrics.APIErrors, 1, 0)
	f.run()
	if evs := f.takeEvents(); len(evs) != 0 {
		t.Fatalf("a second run under the silence sent %v", evs)
	}

	// brief resolves inside its silence; silenced's silence is ended
	// (DELETE) while it still fires.
	f.now = f.now.Add(6 * time.Minute)
	f.record("acct_a", "p1", metrics.APIErrors, 1, 0)
	f.record("acct_a", "p2", metrics.Activity, 0, 0)
	if _, err := f.stores.Silences.EndSilence(context.Background(), "acct_a", sil.ID, f.now.Add(-time.Second)); err != nil {
		t.Fatal(err)
	}
	f.run()
	var held []string // the events of the two silenced rules (the others resolve)
	for _, e := range f.takeEvents() {
		if e.RuleID == silenced.ID || e.RuleID == brief.ID {
			held = append(held, e.RuleID+" "+string(e.Type))
		}
	}
	if len(held) != 1 || held[0] != silenced.ID+" "+string(voiceops.EventTriggered) {
		t.Fatalf("after the silence ended: %v, want one alerts.triggered of %s", held, silenced.ID)
	}
	if g := f.get(brief); g.State != voiceops.StateOK {
		t.Errorf("brief: %s, want ok", g.State)
	}
	if h := f.history(brief); len(h) != 2 || !h[0].Silenced || h[0].EventID != "" {
		t.Errorf("brief's history %+v: want its resolution marked silenced, no event", h)
	}
	// The next runs send nothing more: the triggered event was the one.
	f.now = f.now.Add(30 * time.Second)
	f.record("acct_a", "p1", metrics.APIErrors, 1, 0)
	f.run()
	f.now = f.now.Add(30 * time.Minute) // brief's silence ends too; it stays ok
	f.record("acct_a", "p2", metrics.Activity, 0, 0)
	f.run()
	for _, e := range f.takeEvents() {
		if e.RuleID == brief.ID {
			t.Errorf("brief sent %s after a fire and resolve inside its silence", e.Type)
		}
		if e.RuleID == silenced.ID && e.Type == voiceops.EventTriggered {
			t.Errorf("a second alerts.triggered of the silenced rule")
		}
	}
}

// TestSilencesReadOncePerAccountOnTheStream: the stream path reads an
// account's silences once per invocation, whatever its scopes and rules.
func TestSilencesReadOncePerAccountOnTheStream(t *testing.T) {
	f := newFixture(t)
	for range 3 {
		f.rule("acct_a", "p1", voiceops.MetricAPIErrors, voiceops.OpGreaterEqual, 1, voiceops.Window5m)
		f.rule("acct_a", "p2", voiceops.MetricAPIErrors, voiceops.OpGreaterEqual, 1, voiceops.Window5m)
		f.rule("acct_a", "", voiceops.MetricAPIErrors, voiceops.OpGreaterEqual, 1, voiceops.Window5m)
	}
	f.rule("acct_b", "p1", voiceops.MetricAPIErrors, voiceops.OpGreaterEqual, 1, voiceops.Window5m)
	st, err := f.evaluator().EvaluateScopes(context.Background(), []metrics.Scope{
		{AccountID: "acct_a", ProjectID: "p1"}, {AccountID: "acct_a", ProjectID: "p2"}, {AccountID: "acct_a"}, {AccountID: "acct_b", ProjectID: "p1"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if st.Rules != 10 || st.SilenceReads != 2 {
		t.Errorf("stats %+v: want 10 rules, 2 silence reads", st)
	}
}
