package storetest

import (
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/voiceops"
)

// testEvaluationMarks: a scope's mark reads back to the millisecond, alone
// or with the account's others; an older mark never replaces a later one;
// scopes and accounts do not share marks.
func testEvaluationMarks(t *testing.T, newStores func(t *testing.T) voiceops.Stores) {
	s := newStores(t)
	a, b := mustAccount(t, s), mustAccount(t, s)
	p := mustProject(t, s, a.ID)
	if m, err := s.Evaluations.Mark(ctx(t), a.ID, ""); err != nil || !m.IsZero() {
		t.Fatalf("no mark yet: %v %v", m, err)
	}
	if ms, err := s.Evaluations.Marks(ctx(t), a.ID); err != nil || len(ms) != 0 {
		t.Fatalf("no marks yet: %v %v", ms, err)
	}
	for _, m := range []struct {
		account, project string
		at               time.Time
	}{
		{a.ID, "", at(50)}, {a.ID, "", at(10)}, // the older one is ignored
		{a.ID, p.ID, at(40)}, {a.ID, p.ID, at(45)},
		{b.ID, "", at(70)},
	} {
		if err := s.Evaluations.MarkEvaluated(ctx(t), m.account, m.project, m.at); err != nil {
			t.Fatalf("MarkEvaluated: %v", err)
		}
	}
	want := map[string]time.Time{"": at(50).Truncate(time.Millisecond), p.ID: at(45).Truncate(time.Millisecond)}
	for project, w := range want {
		if m, err := s.Evaluations.Mark(ctx(t), a.ID, project); err != nil || !m.Equal(w) {
			t.Errorf("Mark(%q) = %v %v, want %v", project, m, err, w)
		}
	}
	ms, err := s.Evaluations.Marks(ctx(t), a.ID)
	if err != nil || len(ms) != len(want) {
		t.Fatalf("Marks = %v %v, want %v", ms, err, want)
	}
	for project, w := range want {
		if !ms[project].Equal(w) {
			t.Errorf("Marks[%q] = %v, want %v", project, ms[project], w)
		}
	}
	// A map handed out is a reading at that moment: later marks change the
	// store, not it.
	if err := s.Evaluations.MarkEvaluated(ctx(t), a.ID, p.ID, at(60)); err != nil {
		t.Fatalf("MarkEvaluated: %v", err)
	}
	if !ms[p.ID].Equal(want[p.ID]) {
		t.Errorf("a later mark changed the map Marks returned: %v, want %v", ms[p.ID], want[p.ID])
	}
	if m, err := s.Evaluations.Mark(ctx(t), a.ID, p.ID); err != nil || !m.Equal(at(60).Truncate(time.Millisecond)) {
		t.Errorf("Mark after the later mark = %v %v", m, err)
	}
	if m, err := s.Evaluations.Mark(ctx(t), b.ID, p.ID); err != nil || !m.IsZero() {
		t.Errorf("another account's scope: %v %v", m, err)
	}
	if ms, err := s.Evaluations.Marks(ctx(t), b.ID); err != nil || len(ms) != 1 || !ms[""].Equal(at(70).Truncate(time.Millisecond)) {
		t.Errorf("account b: %v %v", ms, err)
	}
}
