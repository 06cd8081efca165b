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
	t.Run("PutWithDeliveries", func(t *testing.T) { testEventPutWithDeliveries(t, newStores) })
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

// testEventPutWithDeliveries: PutEvent with deliveries writes the event
// (pending) and its deliveries together, or nothing: a refused event or a
// delivery that exists already leaves every item of the call unwritten.
func testEventPutWithDeliveries(t *testing.T, newStores func(*testing.T) voiceops.Stores) {
	s := newStores(t)
	test := newEvent("acct_a", recent(2))
	test.RuleID, test.EndpointID = "", "whe_a"
	d := newDelivery("acct_a", "whe_a", test.CreatedAt)
	d.ID, d.EventID, d.Test = voiceops.DeliveryID(test.ID, "whe_a"), test.ID, true
	mustNil(t, "PutEvent with its delivery", s.Events.PutEvent(ctx(t), test, d))
	got, err := s.Events.GetEvent(ctx(t), "acct_a", test.ID)
	mustNil(t, "GetEvent", err)
	checkEvent(t, "event put with its delivery", test, got)
	checkDelivery(t, "delivery put with its event", d, getDelivery(t, s, d))
	pending, err := s.Events.PendingEvents(ctx(t), time.Now(), 10)
	mustNil(t, "PendingEvents", err)
	if !slices.Equal(eventIDs(pending), []string{test.ID}) {
		t.Errorf("PendingEvents: want the event put with its delivery %s, got %v", test.ID, eventIDs(pending))
	}

	// The same event again, with a new delivery: refused, the delivery unwritten.
	other := newDelivery("acct_a", "whe_b", test.CreatedAt)
	other.ID, other.EventID = voiceops.DeliveryID(test.ID, "whe_b"), test.ID
	wantErr(t, "PutEvent of an existing ID with a delivery", s.Events.PutEvent(ctx(t), test, other), voiceops.ErrAlreadyExists)
	_, err = s.Deliveries.GetDelivery(ctx(t), "acct_a", "whe_b", other.ID)
	wantErr(t, "GetDelivery of a refused event's delivery", err, voiceops.ErrNotFound)

	// A new event whose delivery exists: nothing is written, the stored
	// delivery is left as it was.
	fresh := newEvent("acct_a", recent(1))
	taken := d
	taken.EventID, taken.Status, taken.NextAttemptAt = fresh.ID, voiceops.DeliveryFailed, nil
	if err := s.Events.PutEvent(ctx(t), fresh, taken); err == nil {
		t.Error("PutEvent with a delivery that exists: want an error, got none")
	}
	_, err = s.Events.GetEvent(ctx(t), "acct_a", fresh.ID)
	wantErr(t, "GetEvent of an event whose delivery existed", err, voiceops.ErrNotFound)
	checkDelivery(t, "delivery after a refused second put", d, getDelivery(t, s, d))

	// Past MaxEventDeliveries: refused, nothing written.
	many := newEvent("acct_a", recent(1))
	ds := make([]voiceops.Delivery, voiceops.MaxEventDeliveries+1)
	for i := range ds {
		ds[i] = newDelivery("acct_a", fmt.Sprintf("whe_%d", i), many.CreatedAt)
	}
	if err := s.Events.PutEvent(ctx(t), many, ds...); err == nil {
		t.Errorf("PutEvent with %d deliveries: want an error, got none", len(ds))
	}
	_, err = s.Events.GetEvent(ctx(t), "acct_a", many.ID)
	wantErr(t, "GetEvent of an event put with too many deliveries", err, voiceops.ErrNotFound)
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
