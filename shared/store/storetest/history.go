package storetest

import (
	"reflect"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/voiceops"
)

// testRuleHistory checks the rules' state history: every rule write that
// carries a Change stores one entry with it (and a failed write none),
// read back newest first in cursor pages, per account and rule; the
// stored rule never carries the Change.
func testRuleHistory(t *testing.T, newStores func(*testing.T) voiceops.Stores) {
	s := newStores(t)
	a := mustAccount(t, s)
	r := mustRule(t, s, a.ID, 1)
	// History lives DeliveryLogTTL from its instant: use the present.
	now := time.Now().UTC().Truncate(time.Millisecond)
	states := []voiceops.State{voiceops.StateNoData, voiceops.StateOK, voiceops.StateAlert, voiceops.StateOK, voiceops.StateUnknown}
	var want []voiceops.StateChange // newest first
	cur := r
	for i, st := range states {
		at := now.Add(time.Duration(i-len(states)) * time.Minute)
		if i == 3 {
			at = want[0].At // two changes of one millisecond: the version orders them
		}
		next := cur
		next.State, next.Version, next.Since = st, cur.Version+1, &at
		var value *int64
		if st == voiceops.StateOK || st == voiceops.StateAlert {
			v := int64(10 * i)
			value = &v
		}
		next.CurrentValue = value
		var events []voiceops.AlertEvent
		c := voiceops.StateChange{At: at, From: cur.State, To: st, Value: value, Silenced: i == 1}
		if st == voiceops.StateAlert || cur.State == voiceops.StateAlert {
			typ := voiceops.EventTriggered
			if cur.State == voiceops.StateAlert {
				typ = voiceops.EventResolved
			}
			ev := voiceops.NewAlertEvent(typ, next, cur.State, at, false)
			events = append(events, ev)
			c.EventID = ev.ID
		}
		next.Change = &c
		if i == 2 {
			// A stale write stores neither the state nor its entry.
			stale := next
			stale.Version = cur.Version + 7
			wantErr(t, "UpdateRule with a stale version", s.Rules.UpdateRule(ctx(t), stale, cur.Version+6, false, events...), voiceops.ErrConflictingWrite)
		}
		mustNil(t, "UpdateRule with a change", s.Rules.UpdateRule(ctx(t), next, cur.Version, false, events...))
		stored := c
		stored.AccountID, stored.RuleID, stored.Version = a.ID, r.ID, next.Version
		want = append([]voiceops.StateChange{stored}, want...)
		cur = next
		cur.Change = nil
	}
	// A write without a change adds no entry.
	renamed := cur
	renamed.Name, renamed.Version = "renamed", cur.Version+1
	mustNil(t, "UpdateRule without a change", s.Rules.UpdateRule(ctx(t), renamed, cur.Version, false))
	got, err := s.Rules.GetRule(ctx(t), a.ID, r.ID)
	mustNil(t, "GetRule", err)
	checkRule(t, "GetRule after the writes", renamed, got)
	if got.Change != nil {
		t.Errorf("GetRule returned the write's Change %+v: it is never part of the stored rule", *got.Change)
	}

	all, next, err := s.History.RuleHistory(ctx(t), a.ID, r.ID, "", voiceops.MaxHistoryPage)
	mustNil(t, "RuleHistory", err)
	if next != "" {
		t.Errorf("RuleHistory of everything: next cursor %q, want none", next)
	}
	checkChanges(t, "the whole history", all, want)

	// Pages of two: 2, 2, 1, the cursors chaining them.
	var paged []voiceops.StateChange
	cursor := ""
	for page := 0; ; page++ {
		got, next, err := s.History.RuleHistory(ctx(t), a.ID, r.ID, cursor, 2)
		mustNil(t, "RuleHistory page", err)
		paged = append(paged, got...)
		if next == "" {
			if len(got) != 1 || page != 2 {
				t.Errorf("last page %d holds %d entries, want page 2 with 1", page, len(got))
			}
			break
		}
		if len(got) != 2 || page > 2 {
			t.Fatalf("page %d: %d entries with a next cursor", page, len(got))
		}
		cursor = next
	}
	checkChanges(t, "the history in pages of two", paged, want)

	for _, bad := range []string{"x", "12_", "_3", "1.5_2", "-1_2"} {
		_, _, err := s.History.RuleHistory(ctx(t), a.ID, r.ID, bad, 10)
		wantErr(t, "RuleHistory with cursor "+bad, err, voiceops.ErrInvalidCursor)
	}
	// Another account, another rule: nothing.
	other := mustAccount(t, s)
	for what, ids := range map[string][2]string{"another account": {other.ID, r.ID}, "another rule": {a.ID, "ar_none"}} {
		got, _, err := s.History.RuleHistory(ctx(t), ids[0], ids[1], "", 10)
		mustNil(t, "RuleHistory of "+what, err)
		if len(got) != 0 {
			t.Errorf("RuleHistory of %s = %+v, want nothing", what, got)
		}
	}

	// An entry older than DeliveryLogTTL is gone.
	r2 := mustRule(t, s, a.ID, 2)
	old := now.Add(-voiceops.DeliveryLogTTL - time.Minute)
	gone := r2
	gone.State, gone.Version = voiceops.StateNoData, r2.Version+1
	gone.Change = &voiceops.StateChange{At: old, From: voiceops.StateOK, To: voiceops.StateNoData}
	mustNil(t, "UpdateRule with an old change", s.Rules.UpdateRule(ctx(t), gone, r2.Version, false))
	if got, _, err := s.History.RuleHistory(ctx(t), a.ID, r2.ID, "", 10); err != nil || len(got) != 0 {
		t.Errorf("RuleHistory with an expired entry = %+v, %v; want nothing", got, err)
	}

	// The deliveries of the changes' events, by reference.
	e1, e2 := mustEndpoint(t, s, a.ID, 1), mustEndpoint(t, s, a.ID, 2)
	evID := want[1].EventID
	d := voiceops.Delivery{
		ID: voiceops.DeliveryID(evID, e1.ID), AccountID: a.ID, EndpointID: e1.ID, EventID: evID,
		EventType: voiceops.EventTriggered, Status: voiceops.DeliveryDelivered, CreatedAt: now, UpdatedAt: now,
		Attempts: []voiceops.DeliveryAttempt{{Number: 1, At: now, StatusCode: 200, DurationMS: 12}},
	}
	mustDeliveries(t, s, d)
	refs := []voiceops.DeliveryRef{{EndpointID: e1.ID, EventID: evID}, {EndpointID: e2.ID, EventID: evID}, {EndpointID: e1.ID, EventID: "evt_none"}}
	ds, err := s.History.GetDeliveries(ctx(t), a.ID, refs)
	mustNil(t, "GetDeliveries", err)
	if len(ds) != 1 {
		t.Fatalf("GetDeliveries = %+v, want the one delivery", ds)
	}
	checkDelivery(t, "GetDeliveries", d, ds[0])
	if ds, err := s.History.GetDeliveries(ctx(t), other.ID, refs); err != nil || len(ds) != 0 {
		t.Errorf("GetDeliveries of another account = %+v, %v; want nothing", ds, err)
	}
}

func checkChanges(t *testing.T, what string, got, want []voiceops.StateChange) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d entries, want %d: %+v", what, len(got), len(want), got)
	}
	for i := range want {
		g, w := got[i], want[i]
		g.At, w.At = g.At.UTC(), w.At.UTC()
		if !reflect.DeepEqual(g, w) {
			t.Errorf("%s: entry %d = %+v, want %+v", what, i, g, w)
		}
	}
}
