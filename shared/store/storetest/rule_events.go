package storetest

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/voiceops"
)

// testEnabledRules checks the evaluator's index: every enabled rule of every
// account is in exactly its account's shard, and no disabled rule is.
func testEnabledRules(t *testing.T, newStores func(*testing.T) voiceops.Stores) {
	s := newStores(t)
	var want []string
	for i := 0; i < 3; i++ {
		a := mustAccount(t, s)
		for n := 0; n < 3; n++ {
			r := mustRule(t, s, a.ID, n)
			if n == 1 {
				off := r
				off.Enabled, off.Version = false, r.Version+1
				mustNil(t, "UpdateRule (disable)", s.Rules.UpdateRule(ctx(t), off, r.Version, false))
				continue
			}
			want = append(want, r.ID)
		}
	}
	var got []string
	for shard := range voiceops.RuleShards {
		rules, err := s.Rules.ListEnabledRules(ctx(t), shard)
		mustNil(t, "ListEnabledRules", err)
		for _, r := range rules {
			if voiceops.RuleShardOf(r.AccountID) != shard || !r.Enabled {
				t.Errorf("rule %s (account %s, enabled %v) listed in shard %d", r.ID, r.AccountID, r.Enabled, shard)
			}
			got = append(got, r.ID)
		}
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("enabled rules over all shards = %v, want %v", got, want)
	}
}

// testRuleEvents checks the outbox: a rule write and its events are stored
// together, or neither is.
func testRuleEvents(t *testing.T, newStores func(*testing.T) voiceops.Stores) {
	s := newStores(t)
	a := mustAccount(t, s)
	r := mustRule(t, s, a.ID, 1)
	fired := r
	fired.State, fired.Version = voiceops.StateAlert, r.Version+1
	// Events live 30 days from their creation: use the present.
	now := time.Now().UTC().Truncate(time.Millisecond)
	evp := voiceops.TransitionEvent(voiceops.StateOK, &fired, now)
	if evp == nil || fired.Sequence != r.Sequence+1 {
		t.Fatalf("a transition to alert: event %v, sequence %d", evp, fired.Sequence)
	}
	ev := *evp

	// A stale version writes neither the rule nor the event.
	stale := fired
	stale.Version = r.Version + 5
	wantErr(t, "UpdateRule stale with events", s.Rules.UpdateRule(ctx(t), stale, r.Version+4, false, ev), voiceops.ErrConflictingWrite)
	if _, err := s.Events.GetEvent(ctx(t), a.ID, ev.ID); err == nil {
		t.Errorf("event stored although its state change failed")
	}

	mustNil(t, "UpdateRule with an event", s.Rules.UpdateRule(ctx(t), fired, r.Version, false, ev))
	// The event's sequence number is stored with the state change, so the
	// next transition takes the next number.
	stored, err := s.Rules.GetRule(ctx(t), a.ID, r.ID)
	mustNil(t, "GetRule", err)
	if stored.Sequence != fired.Sequence || !strings.Contains(string(ev.Body), fmt.Sprintf(`"sequence":%d`, fired.Sequence)) {
		t.Errorf("stored sequence %d, event body %s; want %d in both", stored.Sequence, ev.Body, fired.Sequence)
	}
	if r.Sequence != 0 {
		t.Errorf("a new rule's sequence is %d, want 0", r.Sequence)
	}
	got, err := s.Events.GetEvent(ctx(t), a.ID, ev.ID)
	mustNil(t, "GetEvent", err)
	if got.Type != voiceops.EventTriggered || got.RuleID != r.ID || string(got.Body) != string(ev.Body) || got.FannedOut {
		t.Errorf("stored event %+v", got)
	}
	pending, err := s.Events.PendingEvents(ctx(t), now, 10)
	mustNil(t, "PendingEvents", err)
	if len(pending) != 1 || pending[0].ID != ev.ID {
		t.Errorf("pending events %v, want the one event", pending)
	}

	// Deleting a firing rule stores the resolved event with the delete.
	var seen voiceops.AlertRule
	var resolved voiceops.AlertEvent
	_, err = s.Rules.DeleteRule(ctx(t), a.ID, r.ID, func(cur voiceops.AlertRule) []voiceops.AlertEvent {
		seen = cur
		gone := cur
		gone.State = voiceops.StateUnknown
		resolved = voiceops.NewAlertEvent(voiceops.EventResolved, gone, cur.State, now.Add(time.Second), false)
		return []voiceops.AlertEvent{resolved}
	})
	mustNil(t, "DeleteRule with an event", err)
	if seen.State != voiceops.StateAlert || seen.Version != fired.Version {
		t.Errorf("DeleteRule showed the events callback %+v", seen)
	}
	if got, err := s.Events.GetEvent(ctx(t), a.ID, resolved.ID); err != nil || got.Type != voiceops.EventResolved {
		t.Errorf("resolved event after delete: %+v %v", got, err)
	}
	if _, err := s.Rules.GetRule(ctx(t), a.ID, r.ID); err == nil {
		t.Errorf("rule still there after DeleteRule")
	}
}
