package storetest

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/voiceops"
)

// RunEvents runs the contract of voiceops.EventStore on s.Events.
//
// Times are relative to the wall clock (events expire DeliveryLogTTL after
// their creation, and stores read the TTL against their own clock).
func RunEvents(t *testing.T, newStores func(t *testing.T) voiceops.Stores) {
	t.Helper()
	t.Run("PutGet", func(t *testing.T) { testEventPutGet(t, newStores) })
	t.Run("Pending", func(t *testing.T) { testEventsPending(t, newStores) })
	t.Run("Expiry", func(t *testing.T) { testEventsExpiry(t, newStores) })
}

// recent returns the wall clock minus n minutes, at millisecond precision.
func recent(n int) time.Time {
	return time.Now().Add(-time.Duration(n) * time.Minute).Truncate(time.Millisecond).In(time.FixedZone("UTC-3", -3*3600))
}

func newEvent(accountID string, created time.Time) voiceops.AlertEvent {
	id := voiceops.NewID(voiceops.PrefixEvent)
	return voiceops.AlertEvent{
		ID: id, AccountID: accountID, RuleID: voiceops.NewID(voiceops.PrefixRule), Type: voiceops.EventTriggered,
		CreatedAt: created,
		// Bytes that are not valid UTF-8 too: the body is stored as sent.
		Body: fmt.Appendf(nil, `{"event_id":%q,"x":"<&>\u00e9"}`+"\xff\x00", id),
	}
}

func mustEvent(t *testing.T, s voiceops.Stores, e voiceops.AlertEvent) voiceops.AlertEvent {
	t.Helper()
	mustNil(t, "PutEvent", s.Events.PutEvent(ctx(t), e))
	return e
}

func checkEvent(t *testing.T, what string, want, got voiceops.AlertEvent) {
	t.Helper()
	checkWhole(t, what, want, got)
}

func eventIDs(es []voiceops.AlertEvent) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.ID
	}
	return out
}

func testEventPutGet(t *testing.T, newStores func(*testing.T) voiceops.Stores) {
	s := newStores(t)
	e := mustEvent(t, s, newEvent("acct_a", recent(3)))
	got, err := s.Events.GetEvent(ctx(t), "acct_a", e.ID)
	mustNil(t, "GetEvent", err)
	checkEvent(t, "event", e, got)

	test := newEvent("acct_a", recent(2))
	test.RuleID, test.EndpointID = "", voiceops.NewID(voiceops.PrefixEndpoint)
	mustEvent(t, s, test)
	got, err = s.Events.GetEvent(ctx(t), "acct_a", test.ID)
	mustNil(t, "GetEvent test event", err)
	checkEvent(t, "test event", test, got)

	again := e
	again.Body = []byte(`{}`)
	wantErr(t, "PutEvent of an existing ID", s.Events.PutEvent(ctx(t), again), voiceops.ErrAlreadyExists)
	got, err = s.Events.GetEvent(ctx(t), "acct_a", e.ID)
	mustNil(t, "GetEvent", err)
	checkEvent(t, "event after a refused put", e, got)

	_, err = s.Events.GetEvent(ctx(t), "acct_a", "evt_missing")
	wantErr(t, "GetEvent unknown", err, voiceops.ErrNotFound)
	_, err = s.Events.GetEvent(ctx(t), "acct_b", e.ID)
	wantErr(t, "GetEvent of another account", err, voiceops.ErrNotFound)
	wantErr(t, "MarkFannedOut unknown", s.Events.MarkFannedOut(ctx(t), "acct_a", "evt_missing"), voiceops.ErrNotFound)
	wantErr(t, "MarkFannedOut of another account", s.Events.MarkFannedOut(ctx(t), "acct_b", e.ID), voiceops.ErrNotFound)
}

func testEventsPending(t *testing.T, newStores func(*testing.T) voiceops.Stores) {
	s := newStores(t)
	// Across accounts, created out of order: 10 min ago, 9 min ago, ...
	var all []voiceops.AlertEvent
	for i, n := range []int{4, 9, 2, 7, 10, 5} {
		acct := []string{"acct_a", "acct_b", "acct_c"}[i%3]
		all = append(all, mustEvent(t, s, newEvent(acct, recent(n))))
	}
	done := newEvent("acct_a", recent(8))
	done.FannedOut = true
	mustEvent(t, s, done)
	oldestFirst := slices.Clone(all)
	slices.SortFunc(oldestFirst, func(a, b voiceops.AlertEvent) int { return a.CreatedAt.Compare(b.CreatedAt) })

	pending := func(before time.Time, limit int) []voiceops.AlertEvent {
		t.Helper()
		es, err := s.Events.PendingEvents(ctx(t), before, limit)
		mustNil(t, "PendingEvents", err)
		return es
	}
	got := pending(time.Now(), 100)
	if want := eventIDs(oldestFirst); !slices.Equal(eventIDs(got), want) {
		t.Fatalf("PendingEvents: want %v, got %v", want, eventIDs(got))
	}
	for i := range got {
		checkEvent(t, "pending event", oldestFirst[i], got[i])
	}
	if got := pending(time.Now(), 2); !slices.Equal(eventIDs(got), eventIDs(oldestFirst[:2])) {
		t.Errorf("PendingEvents limit 2: want %v, got %v", eventIDs(oldestFirst[:2]), eventIDs(got))
	}
	// createdBefore is inclusive: the event 5 minutes old is in, the 4 is not.
	if got := pending(oldestFirst[3].CreatedAt, 100); !slices.Equal(eventIDs(got), eventIDs(oldestFirst[:4])) {
		t.Errorf("PendingEvents created at or before the 4th: want %v, got %v", eventIDs(oldestFirst[:4]), eventIDs(got))
	}
	if got := pending(recent(60), 100); len(got) != 0 {
		t.Errorf("PendingEvents before all: want none, got %v", eventIDs(got))
	}

	first := oldestFirst[0]
	mustNil(t, "MarkFannedOut", s.Events.MarkFannedOut(ctx(t), first.AccountID, first.ID))
	mustNil(t, "MarkFannedOut again", s.Events.MarkFannedOut(ctx(t), first.AccountID, first.ID))
	if got := pending(time.Now(), 100); !slices.Equal(eventIDs(got), eventIDs(oldestFirst[1:])) {
		t.Errorf("PendingEvents after MarkFannedOut: want %v, got %v", eventIDs(oldestFirst[1:]), eventIDs(got))
	}
	g, err := s.Events.GetEvent(ctx(t), first.AccountID, first.ID)
	mustNil(t, "GetEvent", err)
	want := first
	want.FannedOut = true
	checkEvent(t, "fanned-out event", want, g)
}

func testEventsExpiry(t *testing.T, newStores func(*testing.T) voiceops.Stores) {
	s := newStores(t)
	old := mustEvent(t, s, newEvent("acct_a", time.Now().Add(-voiceops.DeliveryLogTTL-time.Hour).Truncate(time.Millisecond)))
	live := mustEvent(t, s, newEvent("acct_a", time.Now().Add(-voiceops.DeliveryLogTTL+time.Hour).Truncate(time.Millisecond)))
	_, err := s.Events.GetEvent(ctx(t), "acct_a", old.ID)
	wantErr(t, "GetEvent older than the TTL", err, voiceops.ErrNotFound)
	got, err := s.Events.PendingEvents(ctx(t), time.Now(), 100)
	mustNil(t, "PendingEvents", err)
	if !slices.Equal(eventIDs(got), []string{live.ID}) {
		t.Errorf("PendingEvents: want only the live event %s, got %v", live.ID, eventIDs(got))
	}
}
