package storetest

import (
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/voiceops"
)

// RunDNI runs the contract of voiceops.DNIStore. newStores returns empty
// stores and the DNI store over the same data.
func RunDNI(t *testing.T, newStores func(t *testing.T) (voiceops.Stores, voiceops.DNIStore)) {
	t.Helper()
	t.Run("ReserveConsume", func(t *testing.T) { testDNIReserveConsume(t, newStores) })
	t.Run("Expiry", func(t *testing.T) { testDNIExpiry(t, newStores) })
	t.Run("AddNumbers", func(t *testing.T) { testDNIAddNumbers(t, newStores) })
	t.Run("Isolation", func(t *testing.T) { testDNIIsolation(t, newStores) })
	t.Run("Concurrent", func(t *testing.T) { testDNIConcurrent(t, newStores) })
}

var dniNow = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

func testDNIReserveConsume(t *testing.T, newStores func(*testing.T) (voiceops.Stores, voiceops.DNIStore)) {
	s, d := newStores(t)
	a := mustAccount(t, s)
	p := mustProject(t, s, a.ID)
	_, _, err := d.Reserve(ctx(t), a.ID, p.ID, map[string]any{"x": "y"}, dniNow)
	wantErr(t, "Reserve without a pool", err, voiceops.ErrNoAvailableNumber)

	mustNil(t, "AddNumbers", d.AddNumbers(ctx(t), a.ID, p.ID, []string{"+441632960100", "+441632960101"}, 0))
	attrs := map[string]any{"order_id": "o-1", "n": 2.5, "nested": map[string]any{"list": []any{"a", true, nil}}}
	n1, exp1, err := d.Reserve(ctx(t), a.ID, p.ID, attrs, dniNow)
	mustNil(t, "Reserve", err)
	if !exp1.Equal(dniNow.Add(voiceops.DefaultDNIHold)) {
		t.Errorf("expires %v, want %v", exp1, dniNow.Add(voiceops.DefaultDNIHold))
	}
	attrs["order_id"] = "spoiled" // the store keeps its own copy
	n2, _, err := d.Reserve(ctx(t), a.ID, p.ID, map[string]any{}, dniNow)
	mustNil(t, "second Reserve", err)
	if n1 == n2 || (n1 != "+441632960100" && n1 != "+441632960101") || (n2 != "+441632960100" && n2 != "+441632960101") {
		t.Errorf("reserved %q and %q", n1, n2)
	}
	_, _, err = d.Reserve(ctx(t), a.ID, p.ID, map[string]any{}, dniNow)
	wantErr(t, "Reserve of a full pool", err, voiceops.ErrNoAvailableNumber)

	got, ok, err := d.Consume(ctx(t), a.ID, p.ID, n1, dniNow.Add(time.Minute))
	mustNil(t, "Consume", err)
	want := map[string]any{"order_id": "o-1", "n": 2.5, "nested": map[string]any{"list": []any{"a", true, nil}}}
	if !ok || !reflect.DeepEqual(got, want) {
		t.Errorf("Consume = %v %v, want %v true", got, ok, want)
	}
	if _, ok, err := d.Consume(ctx(t), a.ID, p.ID, n1, dniNow.Add(time.Minute)); ok || err != nil {
		t.Errorf("second Consume: ok %v err %v", ok, err)
	}
	// The consumed number is free again.
	n3, _, err := d.Reserve(ctx(t), a.ID, p.ID, nil, dniNow.Add(time.Minute))
	mustNil(t, "Reserve after Consume", err)
	if n3 != n1 {
		t.Errorf("reserved %q, want the consumed %q", n3, n1)
	}
	got, ok, err = d.Consume(ctx(t), a.ID, p.ID, n3, dniNow.Add(time.Minute))
	if err != nil || !ok || got == nil || len(got) != 0 {
		t.Errorf("Consume of a reservation without attributes = %v %v %v, want {} true", got, ok, err)
	}
	// Empty attributes are read back empty, not absent (nil).
	got, ok, err = d.Consume(ctx(t), a.ID, p.ID, n2, dniNow.Add(time.Minute))
	mustNil(t, "Consume of the reservation without attributes", err)
	if !ok {
		t.Errorf("Consume of the reservation without attributes: not found")
	}
	checkWhole(t, "attributes of the reservation without attributes", map[string]any{}, got)
	if _, ok, err := d.Consume(ctx(t), a.ID, p.ID, "+441632960199", dniNow); ok || err != nil {
		t.Errorf("Consume of a number not in the pool: ok %v err %v", ok, err)
	}
}

func testDNIExpiry(t *testing.T, newStores func(*testing.T) (voiceops.Stores, voiceops.DNIStore)) {
	s, d := newStores(t)
	a := mustAccount(t, s)
	p := mustProject(t, s, a.ID)
	mustNil(t, "AddNumbers", d.AddNumbers(ctx(t), a.ID, p.ID, []string{"+15550100"}, 2*time.Minute))
	n, exp, err := d.Reserve(ctx(t), a.ID, p.ID, map[string]any{"k": "first"}, dniNow)
	mustNil(t, "Reserve", err)
	if !exp.Equal(dniNow.Add(2 * time.Minute)) {
		t.Errorf("expires %v with a 2m hold", exp)
	}
	_, _, err = d.Reserve(ctx(t), a.ID, p.ID, nil, exp.Add(-time.Millisecond))
	wantErr(t, "Reserve before the expiry", err, voiceops.ErrNoAvailableNumber)
	if _, ok, err := d.Consume(ctx(t), a.ID, p.ID, n, exp); ok || err != nil {
		t.Errorf("Consume at the expiry: ok %v err %v", ok, err)
	}
	n2, _, err := d.Reserve(ctx(t), a.ID, p.ID, map[string]any{"k": "second"}, exp)
	mustNil(t, "Reserve at the expiry", err)
	if n2 != n {
		t.Errorf("reserved %q", n2)
	}
	got, ok, err := d.Consume(ctx(t), a.ID, p.ID, n, exp.Add(time.Second))
	if err != nil || !ok || got["k"] != "second" {
		t.Errorf("Consume of the new reservation = %v %v %v", got, ok, err)
	}
}

func testDNIAddNumbers(t *testing.T, newStores func(*testing.T) (voiceops.Stores, voiceops.DNIStore)) {
	s, d := newStores(t)
	a := mustAccount(t, s)
	p := mustProject(t, s, a.ID)
	wantErr(t, "AddNumbers to a missing project", d.AddNumbers(ctx(t), a.ID, "proj_missing", []string{"+15550100"}, 0), voiceops.ErrNotFound)
	for _, bad := range [][]string{nil, {"15550100"}, {"+0123456"}, {"+1"}, {"+15550100", "x"}} {
		if err := d.AddNumbers(ctx(t), a.ID, p.ID, bad, 0); voiceops.KindOf(err) != voiceops.KindInvalid {
			t.Errorf("AddNumbers(%q): %v, want invalid", bad, err)
		}
	}
	mustNil(t, "AddNumbers", d.AddNumbers(ctx(t), a.ID, p.ID, []string{"+15550100"}, time.Minute))
	n, _, err := d.Reserve(ctx(t), a.ID, p.ID, map[string]any{"keep": 1.0}, dniNow)
	mustNil(t, "Reserve", err)
	// Adding again changes the hold and keeps the reservation; new numbers join.
	mustNil(t, "AddNumbers again", d.AddNumbers(ctx(t), a.ID, p.ID, []string{"+15550100", "+15550101"}, 5*time.Minute))
	n2, exp, err := d.Reserve(ctx(t), a.ID, p.ID, nil, dniNow)
	mustNil(t, "Reserve of the new number", err)
	if n2 != "+15550101" || !exp.Equal(dniNow.Add(5*time.Minute)) {
		t.Errorf("reserved %q until %v", n2, exp)
	}
	got, ok, err := d.Consume(ctx(t), a.ID, p.ID, n, dniNow.Add(30*time.Second))
	if err != nil || !ok || got["keep"] != 1.0 {
		t.Errorf("the reservation was not kept: %v %v %v", got, ok, err)
	}
	n3, exp, err := d.Reserve(ctx(t), a.ID, p.ID, nil, dniNow)
	mustNil(t, "Reserve with the new hold", err)
	if n3 != n || !exp.Equal(dniNow.Add(5*time.Minute)) {
		t.Errorf("reserved %q until %v, want the new hold", n3, exp)
	}
}

func testDNIIsolation(t *testing.T, newStores func(*testing.T) (voiceops.Stores, voiceops.DNIStore)) {
	s, d := newStores(t)
	a, b := mustAccount(t, s), mustAccount(t, s)
	p := mustProject(t, s, a.ID)
	other := mustProject(t, s, a.ID)
	mustNil(t, "CreateProject", s.Accounts.CreateProject(ctx(t), voiceops.Project{ID: p.ID, AccountID: b.ID, Name: "same ID", CreatedAt: at(2)}))
	mustNil(t, "AddNumbers", d.AddNumbers(ctx(t), a.ID, p.ID, []string{"+15550100"}, 0))
	_, _, err := d.Reserve(ctx(t), a.ID, other.ID, nil, dniNow)
	wantErr(t, "Reserve in another project", err, voiceops.ErrNoAvailableNumber)
	_, _, err = d.Reserve(ctx(t), b.ID, p.ID, nil, dniNow)
	wantErr(t, "Reserve in the same project ID of another account", err, voiceops.ErrNoAvailableNumber)
	n, _, err := d.Reserve(ctx(t), a.ID, p.ID, map[string]any{"a": "b"}, dniNow)
	mustNil(t, "Reserve", err)
	for _, ids := range [][2]string{{a.ID, other.ID}, {b.ID, p.ID}} {
		if _, ok, err := d.Consume(ctx(t), ids[0], ids[1], n, dniNow); ok || err != nil {
			t.Errorf("Consume from %v: ok %v err %v", ids, ok, err)
		}
	}
	if _, ok, err := d.Consume(ctx(t), a.ID, p.ID, n, dniNow); !ok || err != nil {
		t.Errorf("Consume: ok %v err %v", ok, err)
	}
}

// testDNIConcurrent: 2N concurrent reservations of a pool of N numbers:
// exactly N succeed, with N distinct numbers; the others find none.
func testDNIConcurrent(t *testing.T, newStores func(*testing.T) (voiceops.Stores, voiceops.DNIStore)) {
	s, d := newStores(t)
	a := mustAccount(t, s)
	p := mustProject(t, s, a.ID)
	const n = 8
	numbers := make([]string, n)
	for i := range numbers {
		numbers[i] = fmt.Sprintf("+4416329601%02d", i)
	}
	mustNil(t, "AddNumbers", d.AddNumbers(ctx(t), a.ID, p.ID, numbers, 0))
	var wg sync.WaitGroup
	got := make([]string, 2*n)
	errs := make([]error, 2*n)
	for i := range 2 * n {
		wg.Go(func() {
			got[i], _, errs[i] = d.Reserve(ctx(t), a.ID, p.ID, map[string]any{"i": float64(i)}, dniNow)
		})
	}
	wg.Wait()
	seen := map[string]int{}
	for i, err := range errs {
		switch {
		case err == nil:
			if prev, dup := seen[got[i]]; dup {
				t.Errorf("reservations %d and %d both got %s", prev, i, got[i])
			}
			seen[got[i]] = i
		case voiceops.KindOf(err) != voiceops.KindNotFound:
			t.Errorf("reservation %d: %v", i, err)
		}
	}
	if len(seen) != n {
		t.Errorf("%d reservations succeeded, want %d", len(seen), n)
	}
	// Each number carries the attributes of the reservation that got it.
	for num, i := range seen {
		attrs, ok, err := d.Consume(ctx(t), a.ID, p.ID, num, dniNow)
		if err != nil || !ok || attrs["i"] != float64(i) {
			t.Errorf("Consume(%s) = %v %v %v, want i=%d", num, attrs, ok, err, i)
		}
	}
}
