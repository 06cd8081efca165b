package storetest

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/voiceops"
)

// Woken returns the scopes a store has woken so far, one "account/project"
// per wake-up ("account/" for the account-wide scope), in any order.
type Woken func() []string

// RunWakes runs the contract of the wake-ups (voiceops.RuleStore): a rule
// written marked Wake, and a silence ended, wake their scopes in the same
// write, and nothing else does. newStores returns empty stores set up to
// wake, and what they have woken.
func RunWakes(t *testing.T, newStores func(t *testing.T) (voiceops.Stores, Woken)) {
	t.Helper()
	t.Run("Rules", func(t *testing.T) { testRuleWakes(t, newStores) })
	t.Run("SilenceEnds", func(t *testing.T) { testSilenceEndWakes(t, newStores) })
}

// wantWoken fails unless the store has woken exactly want (in any order)
// since the last call: seen holds what it had woken by then.
func wantWoken(t *testing.T, what string, woken Woken, seen *[]string, want ...string) {
	t.Helper()
	rest := slices.Clone(*seen)
	var got []string
	for _, w := range woken() {
		if i := slices.Index(rest, w); i >= 0 {
			rest = slices.Delete(rest, i, i+1)
			continue
		}
		got = append(got, w)
		*seen = append(*seen, w)
	}
	if len(rest) > 0 {
		t.Fatalf("%s: wake-ups %v are gone", what, rest)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("%s: woken %v, want %v", what, got, want)
	}
}

// testRuleWakes: CreateRule and UpdateRule wake the rule's scope when it
// is marked Wake, and only when the write is made; a read never returns
// the mark.
func testRuleWakes(t *testing.T, newStores func(*testing.T) (voiceops.Stores, Woken)) {
	s, woken := newStores(t)
	var seen []string
	a := mustAccount(t, s)
	p := mustProject(t, s, a.ID)
	scope := a.ID + "/" + p.ID

	plain := newRule(a.ID, 1)
	mustNil(t, "CreateRule", s.Rules.CreateRule(ctx(t), plain))
	wantWoken(t, "CreateRule not marked", woken, &seen)

	r := newRule(a.ID, 2)
	r.ProjectID, r.Wake = &p.ID, true
	mustNil(t, "CreateRule marked Wake", s.Rules.CreateRule(ctx(t), r))
	wantWoken(t, "CreateRule marked Wake", woken, &seen, scope)
	wide := newRule(a.ID, 3)
	wide.Wake = true
	mustNil(t, "CreateRule account-wide marked Wake", s.Rules.CreateRule(ctx(t), wide))
	wantWoken(t, "CreateRule account-wide marked Wake", woken, &seen, a.ID+"/")

	missing := newRule(a.ID, 4)
	missing.ProjectID, missing.Wake = ptr("proj_missing"), true
	wantErr(t, "CreateRule of a missing project, marked Wake", s.Rules.CreateRule(ctx(t), missing), voiceops.ErrProjectNotFound)
	again := r
	again.Name = "another rule, same ID"
	wantErr(t, "CreateRule of an existing ID, marked Wake", s.Rules.CreateRule(ctx(t), again), voiceops.ErrAlreadyExists)
	wantWoken(t, "refused creates marked Wake", woken, &seen)

	for _, read := range []voiceops.AlertRule{getRule(t, s, a.ID, r.ID), getRule(t, s, a.ID, wide.ID)} {
		if read.Wake {
			t.Errorf("GetRule %s: the rule reads back marked Wake", read.ID)
		}
	}
	list, err := s.Rules.ListRules(ctx(t), a.ID)
	mustNil(t, "ListRules", err)
	for _, read := range list {
		if read.Wake {
			t.Errorf("ListRules: %s reads back marked Wake", read.ID)
		}
	}

	next := r
	next.Threshold, next.Version, next.UpdatedAt, next.Wake = 9, r.Version+1, at(10), false
	mustNil(t, "UpdateRule not marked", s.Rules.UpdateRule(ctx(t), next, r.Version, false))
	wantWoken(t, "UpdateRule not marked", woken, &seen)
	cur := next
	next.Threshold, next.Version, next.Wake = 10, cur.Version+1, true
	mustNil(t, "UpdateRule marked Wake", s.Rules.UpdateRule(ctx(t), next, cur.Version, false))
	wantWoken(t, "UpdateRule marked Wake", woken, &seen, scope)
	stale := next
	stale.Threshold, stale.Version = 11, cur.Version+1
	wantErr(t, "UpdateRule of a stale version, marked Wake", s.Rules.UpdateRule(ctx(t), stale, cur.Version, false), voiceops.ErrConflictingWrite)
	wantWoken(t, "UpdateRule of a stale version, marked Wake", woken, &seen)

	// With the events of a transition: all written together.
	cur = next
	cur.Wake = false
	// Evaluated now: events expire DeliveryLogTTL after their creation.
	fired, ev := cur.Evaluated(voiceops.Outcome{Value: 100}, time.Now())
	if ev == nil {
		t.Fatal("no event for a breach")
	}
	fired.Wake = true
	mustNil(t, "UpdateRule with an event, marked Wake", s.Rules.UpdateRule(ctx(t), fired, cur.Version, false, *ev))
	wantWoken(t, "UpdateRule with an event, marked Wake", woken, &seen, scope)
	if got, err := s.Events.GetEvent(ctx(t), a.ID, ev.ID); err != nil || got.ID != ev.ID {
		t.Errorf("the event written with a wake-up: %v", err)
	}
	if got := getRule(t, s, a.ID, r.ID); got.State != voiceops.StateAlert || got.Wake {
		t.Errorf("the rule written with an event and a wake-up: state %s, Wake %v", got.State, got.Wake)
	}
}

func getRule(t *testing.T, s voiceops.Stores, accountID, id string) voiceops.AlertRule {
	t.Helper()
	r, err := s.Rules.GetRule(ctx(t), accountID, id)
	mustNil(t, "GetRule", err)
	return r
}

// testSilenceEndWakes: ending a silence in effect wakes the scope of each
// enabled rule of its account it selects, once per scope; removing one
// not started, or ending one already ended, wakes nothing; so does a
// silence that selects no enabled rule.
func testSilenceEndWakes(t *testing.T, newStores func(*testing.T) (voiceops.Stores, Woken)) {
	s, woken := newStores(t)
	var seen []string
	a, b := mustAccount(t, s), mustAccount(t, s)
	p1, p2 := mustProject(t, s, a.ID), mustProject(t, s, a.ID)
	rule := func(accountID string, n int, project *string, m voiceops.Metric, enabled bool) {
		t.Helper()
		r := newRule(accountID, n)
		r.ProjectID, r.Metric, r.Enabled = project, m, enabled
		mustNil(t, "CreateRule", s.Rules.CreateRule(ctx(t), r))
	}
	rule(a.ID, 1, &p1.ID, voiceops.MetricAPIErrors, true)
	rule(a.ID, 2, &p1.ID, voiceops.MetricAPIErrors, true) // the same scope: woken once
	rule(a.ID, 3, nil, voiceops.MetricAPIErrors, true)
	rule(a.ID, 4, &p2.ID, voiceops.MetricAPIErrors, false)  // disabled: not evaluated
	rule(a.ID, 5, &p2.ID, voiceops.MetricCallCrashes, true) // not selected
	bp := mustProject(t, s, b.ID)
	rule(b.ID, 6, &bp.ID, voiceops.MetricAPIErrors, true) // another account's
	wantWoken(t, "rules created not marked", woken, &seen)

	now := time.Now().UTC().Truncate(time.Millisecond)
	byMetric := voiceops.SilenceMatcher{Name: voiceops.MatchMetric, Value: ptr(string(voiceops.MetricAPIErrors))}
	create := func(x voiceops.Silence) voiceops.Silence {
		t.Helper()
		mustNil(t, "CreateSilence", s.Silences.CreateSilence(ctx(t), x, now, nil))
		return x
	}
	inEffect := create(newSilence(a.ID, now.Add(-time.Hour), now.Add(time.Hour), byMetric))
	notStarted := create(newSilence(a.ID, now.Add(time.Hour), now.Add(2*time.Hour), byMetric))
	nothing := create(newSilence(a.ID, now.Add(-time.Hour), now.Add(time.Hour), voiceops.SilenceMatcher{Name: voiceops.MatchMetric, Value: ptr(string(voiceops.MetricCallVolume))}))
	wantWoken(t, "silences created", woken, &seen)

	end := now.Add(time.Minute)
	ended, err := s.Silences.EndSilence(ctx(t), a.ID, inEffect.ID, end)
	mustNil(t, "EndSilence in effect", err)
	if !ended.EndsAt.Equal(end) {
		t.Errorf("EndSilence in effect: ends at %v, want %v", ended.EndsAt, end)
	}
	wantWoken(t, "EndSilence in effect", woken, &seen, a.ID+"/", a.ID+"/"+p1.ID)
	_, err = s.Silences.EndSilence(ctx(t), a.ID, inEffect.ID, end.Add(time.Minute))
	mustNil(t, "EndSilence already ended", err)
	wantWoken(t, "EndSilence already ended", woken, &seen)
	_, err = s.Silences.EndSilence(ctx(t), a.ID, notStarted.ID, end)
	mustNil(t, "EndSilence not started", err)
	wantWoken(t, "EndSilence not started (removed)", woken, &seen)
	_, err = s.Silences.EndSilence(ctx(t), a.ID, nothing.ID, end)
	mustNil(t, "EndSilence selecting no rule", err)
	wantWoken(t, "EndSilence selecting no enabled rule", woken, &seen)
	_, err = s.Silences.EndSilence(ctx(t), b.ID, notStarted.ID, end)
	if !errors.Is(err, voiceops.ErrNotFound) {
		t.Errorf("EndSilence of another account's silence: %v, want ErrNotFound", err)
	}
	wantWoken(t, "EndSilence of another account's silence", woken, &seen)
}
