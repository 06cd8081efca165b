package storetest

import (
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/voiceops"
)

// testEvaluationMarks: a scope's mark shows as last_evaluated_at of the
// enabled rules of that scope created or changed before it, on GetRule and
// ListRules alike; an older mark never replaces a later one; other scopes
// and accounts are untouched.
func testEvaluationMarks(t *testing.T, newStores func(t *testing.T) voiceops.Stores) {
	s := newStores(t)
	a, b := mustAccount(t, s), mustAccount(t, s)
	p := mustProject(t, s, a.ID)
	project := mustRule(t, s, a.ID, 1) // at(1)
	project.ProjectID = ptr(p.ID)
	project.Version = 2
	if err := s.Rules.UpdateRule(ctx(t), project, 1, true); err != nil {
		t.Fatal(err)
	}
	wide := mustRule(t, s, a.ID, 2)
	disabled := newRule(a.ID, 3)
	disabled.Enabled = false
	if err := s.Rules.CreateRule(ctx(t), disabled); err != nil {
		t.Fatal(err)
	}
	later := mustRule(t, s, a.ID, 100) // created after the mark
	other := mustRule(t, s, b.ID, 4)

	mark := at(50).Truncate(time.Millisecond)
	for _, m := range []struct {
		account, project string
		at               time.Time
	}{
		{a.ID, "", mark}, {a.ID, "", at(10)}, // the older one is ignored
		{a.ID, p.ID, at(40)},
	} {
		if err := s.Evaluations.MarkEvaluated(ctx(t), m.account, m.project, m.at); err != nil {
			t.Fatalf("MarkEvaluated: %v", err)
		}
	}
	want := map[string]*time.Time{
		project.ID: ptr(at(40).UTC()), wide.ID: ptr(mark.UTC()), disabled.ID: nil, later.ID: nil,
	}
	check := func(how string, r voiceops.AlertRule) {
		t.Helper()
		w, ok := want[r.ID]
		if !ok {
			t.Fatalf("%s: unexpected rule %s", how, r.ID)
		}
		if (w == nil) != (r.LastEvaluatedAt == nil) || (w != nil && !w.Equal(*r.LastEvaluatedAt)) {
			t.Errorf("%s %s: last_evaluated_at %v, want %v", how, r.Name, r.LastEvaluatedAt, w)
		}
	}
	for id := range want {
		r, err := s.Rules.GetRule(ctx(t), a.ID, id)
		if err != nil {
			t.Fatal(err)
		}
		check("GetRule", r)
	}
	rules, err := s.Rules.ListRules(ctx(t), a.ID)
	if err != nil || len(rules) != len(want) {
		t.Fatalf("ListRules: %d rules, %v", len(rules), err)
	}
	for _, r := range rules {
		check("ListRules", r)
	}
	if r, err := s.Rules.GetRule(ctx(t), b.ID, other.ID); err != nil || r.LastEvaluatedAt != nil {
		t.Errorf("another account's rule: %v %v", r.LastEvaluatedAt, err)
	}
	// A rule's own, later evaluation stays.
	own := at(60)
	wide.LastEvaluatedAt, wide.Version = &own, 2
	if err := s.Rules.UpdateRule(ctx(t), wide, 1, false); err != nil {
		t.Fatal(err)
	}
	if r, _ := s.Rules.GetRule(ctx(t), a.ID, wide.ID); r.LastEvaluatedAt == nil || !r.LastEvaluatedAt.Equal(own) {
		t.Errorf("own later evaluation: %v, want %v", r.LastEvaluatedAt, own)
	}
}
