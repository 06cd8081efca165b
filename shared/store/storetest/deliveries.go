package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/voiceops"
)

// RunDeliveries runs the contract of voiceops.DeliveryStore on
// s.Deliveries. Times are relative to the wall clock, as in RunEvents.
func RunDeliveries(t *testing.T, newStores func(t *testing.T) voiceops.Stores) {
	t.Helper()
	t.Run("CreateGet", func(t *testing.T) { testDeliveryCreateGet(t, newStores) })
	t.Run("List", func(t *testing.T) { testDeliveryList(t, newStores) })
	t.Run("RecordAttempt", func(t *testing.T) { testRecordAttempt(t, newStores) })
	t.Run("OneClaimPerAttempt", func(t *testing.T) { testOneClaimPerAttempt(t, newStores) })
}

func newDelivery(accountID, endpointID string, created time.Time) voiceops.Delivery {
	eventID := voiceops.NewID(voiceops.PrefixEvent)
	next := created
	return voiceops.Delivery{
		ID: voiceops.DeliveryID(eventID, endpointID), AccountID: accountID, EndpointID: endpointID, EventID: eventID,
		EventType: voiceops.EventTriggered, Status: voiceops.DeliveryPending, NextAttemptAt: &next,
		CreatedAt: created, UpdatedAt: created,
	}
}

func mustDeliveries(t *testing.T, s voiceops.Stores, ds ...voiceops.Delivery) {
	t.Helper()
	mustNil(t, "CreateDeliveries", s.Deliveries.CreateDeliveries(ctx(t), ds))
}

func getDelivery(t *testing.T, s voiceops.Stores, d voiceops.Delivery) voiceops.Delivery {
	t.Helper()
	got, err := s.Deliveries.GetDelivery(ctx(t), d.AccountID, d.EndpointID, d.ID)
	mustNil(t, "GetDelivery", err)
	return got
}

func checkDelivery(t *testing.T, what string, want, got voiceops.Delivery) {
	t.Helper()
	checkWhole(t, what, want, got)
}

func deliveryIDs(ds []voiceops.Delivery) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.ID
	}
	return out
}

func testDeliveryCreateGet(t *testing.T, newStores func(*testing.T) voiceops.Stores) {
	s := newStores(t)
	a := newDelivery("acct_a", "whe_a", recent(5))
	b := newDelivery("acct_a", "whe_a", recent(4))
	b.Test, b.EventType = true, voiceops.EventResolved
	mustDeliveries(t, s, a, b)
	checkDelivery(t, "delivery a", a, getDelivery(t, s, a))
	checkDelivery(t, "delivery b", b, getDelivery(t, s, b))

	// Idempotent: existing IDs are left alone, new ones in the same call
	// are created.
	changed := a
	changed.Status, changed.NextAttemptAt = voiceops.DeliveryFailed, nil
	c := newDelivery("acct_a", "whe_b", recent(3))
	mustDeliveries(t, s, changed, c, b)
	checkDelivery(t, "delivery a after a second create", a, getDelivery(t, s, a))
	checkDelivery(t, "delivery c", c, getDelivery(t, s, c))
	mustNil(t, "CreateDeliveries of nothing", s.Deliveries.CreateDeliveries(ctx(t), nil))

	for _, tc := range []struct{ name, acct, endpoint, id string }{
		{"unknown ID", "acct_a", "whe_a", "dlv_missing"},
		{"another endpoint", "acct_a", "whe_b", a.ID},
		{"another account", "acct_b", "whe_a", a.ID},
	} {
		_, err := s.Deliveries.GetDelivery(ctx(t), tc.acct, tc.endpoint, tc.id)
		wantErr(t, "GetDelivery of "+tc.name, err, voiceops.ErrNotFound)
	}
}

func testDeliveryList(t *testing.T, newStores func(*testing.T) voiceops.Stores) {
	s := newStores(t)
	var want []voiceops.Delivery // newest first
	for _, n := range []int{1, 3, 7, 20, 60 * 24 * 29} {
		want = append(want, newDelivery("acct_a", "whe_a", recent(n)))
	}
	same := newDelivery("acct_a", "whe_a", want[1].CreatedAt) // ties: ID descending
	if same.ID > want[1].ID {
		want = slices.Insert(want, 1, same)
	} else {
		want = slices.Insert(want, 2, same)
	}
	old := newDelivery("acct_a", "whe_a", time.Now().Add(-voiceops.DeliveryLogTTL-time.Minute).Truncate(time.Millisecond))
	other := newDelivery("acct_a", "whe_b", recent(2))
	foreign := newDelivery("acct_b", "whe_a", recent(2))
	// Created in shuffled order, in two calls.
	mustDeliveries(t, s, want[3], old, want[0], other)
	mustDeliveries(t, s, want[5], foreign, want[2], want[1], want[4])

	got, err := s.Deliveries.ListDeliveries(ctx(t), "acct_a", "whe_a", 100)
	mustNil(t, "ListDeliveries", err)
	if !slices.Equal(deliveryIDs(got), deliveryIDs(want)) {
		t.Fatalf("ListDeliveries: want %v, got %v", deliveryIDs(want), deliveryIDs(got))
	}
	for i := range got {
		checkDelivery(t, "listed delivery", want[i], got[i])
	}
	got, err = s.Deliveries.ListDeliveries(ctx(t), "acct_a", "whe_a", 3)
	mustNil(t, "ListDeliveries limit 3", err)
	if !slices.Equal(deliveryIDs(got), deliveryIDs(want[:3])) {
		t.Errorf("ListDeliveries limit 3: want %v, got %v", deliveryIDs(want[:3]), deliveryIDs(got))
	}
	got, err = s.Deliveries.ListDeliveries(ctx(t), "acct_b", "whe_b", 10)
	mustNil(t, "ListDeliveries empty", err)
	if len(got) != 0 {
		t.Errorf("ListDeliveries of an endpoint without deliveries: got %v", deliveryIDs(got))
	}
	_, err = s.Deliveries.GetDelivery(ctx(t), old.AccountID, old.EndpointID, old.ID)
	wantErr(t, "GetDelivery older than the TTL", err, voiceops.ErrNotFound)
}

func testRecordAttempt(t *testing.T, newStores func(*testing.T) voiceops.Stores) {
	s := newStores(t)
	d := newDelivery("acct_a", "whe_a", recent(10))
	mustDeliveries(t, s, d)

	// Claim attempt 1 (open: no status, no error), then record its result.
	claimed := d
	claimed.Attempts = []voiceops.DeliveryAttempt{{Number: 1, At: recent(9)}}
	claimed.NextAttemptAt, claimed.UpdatedAt = nil, recent(9)
	mustNil(t, "RecordAttempt claim 1", s.Deliveries.RecordAttempt(ctx(t), claimed, 0))
	checkDelivery(t, "claimed delivery", claimed, getDelivery(t, s, d))
	if got := getDelivery(t, s, d); !got.Attempts[0].Open() {
		t.Errorf("claimed attempt: want Open, got %+v", got.Attempts[0])
	}
	wantErr(t, "second claim of attempt 1", s.Deliveries.RecordAttempt(ctx(t), claimed, 0), voiceops.ErrConflictingWrite)

	result := claimed
	result.Attempts = []voiceops.DeliveryAttempt{{Number: 1, At: recent(9), StatusCode: 503, DurationMS: 1234, Error: "HTTP 503"}}
	next := recent(8)
	result.NextAttemptAt, result.UpdatedAt = &next, recent(9).Add(2*time.Second)
	mustNil(t, "RecordAttempt result 1", s.Deliveries.RecordAttempt(ctx(t), result, 1))
	checkDelivery(t, "delivery after attempt 1", result, getDelivery(t, s, d))

	final := result
	final.Attempts = append(slices.Clone(result.Attempts),
		voiceops.DeliveryAttempt{Number: 2, At: recent(8), StatusCode: 0, DurationMS: 5000, Error: "timed out after 5s"},
		voiceops.DeliveryAttempt{Number: 3, At: recent(7), StatusCode: 204, DurationMS: 12})
	final.Status, final.NextAttemptAt, final.UpdatedAt = voiceops.DeliveryDelivered, nil, recent(7)
	wantErr(t, "RecordAttempt with a stale count", s.Deliveries.RecordAttempt(ctx(t), final, 2), voiceops.ErrConflictingWrite)
	mustNil(t, "RecordAttempt of two at once", s.Deliveries.RecordAttempt(ctx(t), final, 1))
	checkDelivery(t, "delivered delivery", final, getDelivery(t, s, d))
	if a := getDelivery(t, s, d).Attempts; a[1].Open() || a[2].Open() {
		t.Errorf("finished attempts read as open: %+v", a)
	}

	unknown := newDelivery("acct_a", "whe_a", recent(1))
	wantErr(t, "RecordAttempt of an unknown delivery", s.Deliveries.RecordAttempt(ctx(t), unknown, 0), voiceops.ErrNotFound)
	if _, err := s.Deliveries.GetDelivery(ctx(t), "acct_a", "whe_a", unknown.ID); err == nil {
		t.Errorf("RecordAttempt of an unknown delivery created it")
	}
}

func testOneClaimPerAttempt(t *testing.T, newStores func(*testing.T) voiceops.Stores) {
	s := newStores(t)
	d := newDelivery("acct_a", "whe_a", recent(1))
	mustDeliveries(t, s, d)
	const n = 10
	errs := race(n, func(i int) error {
		c := d
		c.Attempts = []voiceops.DeliveryAttempt{{Number: 1, At: recent(0), DurationMS: int64(i)}}
		return s.Deliveries.RecordAttempt(ctx(t), c, 0)
	})
	winner := exactlyOne(t, "RecordAttempt claims of attempt 1", errs, voiceops.ErrConflictingWrite)
	if got := getDelivery(t, s, d); len(got.Attempts) != 1 || got.Attempts[0].DurationMS != int64(winner) {
		t.Errorf("after the race: want the winner's claim (%d), got %+v", winner, got.Attempts)
	}
}
