package storetest

import (
	"errors"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/voiceops"
)

func newSilence(accountID string, starts, ends time.Time, ms ...voiceops.SilenceMatcher) voiceops.Silence {
	return voiceops.Silence{
		ID: voiceops.NewID(voiceops.PrefixSilence), AccountID: accountID, Matchers: ms,
		StartsAt: starts, EndsAt: ends, Comment: "maintenance " + voiceops.RandomBase62(4), CreatedAt: starts,
	}
}

// testSilences checks the silences: each reads back whole, in creation
// order, per account; ActiveSilences leaves out the ended; EndSilence ends
// one in effect (kept, listed), removes one not started, leaves an ended
// one; an ended silence is listed for SilenceRetention.
func testSilences(t *testing.T, newStores func(*testing.T) voiceops.Stores) {
	s := newStores(t)
	a, b := mustAccount(t, s), mustAccount(t, s)
	p := mustProject(t, s, a.ID)
	// Silences live SilenceRetention past their end: use the present.
	now := time.Now().UTC().Truncate(time.Millisecond)
	inEffect := newSilence(a.ID, now.Add(-time.Hour), now.Add(time.Hour),
		voiceops.SilenceMatcher{Name: voiceops.MatchProjectID, Value: &p.ID}, voiceops.SilenceMatcher{Name: voiceops.MatchMetric, Value: ptr("api_errors")})
	later := newSilence(a.ID, now.Add(time.Hour), now.Add(2*time.Hour), voiceops.SilenceMatcher{Name: voiceops.MatchProjectID})
	later.CreatedAt = later.CreatedAt.Add(-90 * time.Minute) // created after inEffect
	later.Comment = ""
	ended := newSilence(a.ID, now.Add(-3*time.Hour), now.Add(-2*time.Hour))
	ended.CreatedAt = now.Add(-4 * time.Hour)
	other := newSilence(b.ID, now.Add(-time.Hour), now.Add(time.Hour))
	for _, x := range []voiceops.Silence{inEffect, later, ended, other} {
		if err := s.Silences.CreateSilence(ctx(t), x, now, nil); err != nil {
			t.Fatalf("CreateSilence: %v", err)
		}
	}
	dup := inEffect
	dup.Comment = "another"
	if err := s.Silences.CreateSilence(ctx(t), dup, now, nil); !errors.Is(err, voiceops.ErrAlreadyExists) {
		t.Errorf("another silence with the same ID: %v", err)
	}
	if err := s.Silences.CreateSilence(ctx(t), newSilence("acct_missing", now, now.Add(time.Hour)), now, nil); !errors.Is(err, voiceops.ErrNotFound) {
		t.Errorf("a silence of no account: %v", err)
	}
	list := func(accountID string, at time.Time) []voiceops.Silence {
		t.Helper()
		got, err := s.Silences.ListSilences(ctx(t), accountID, at)
		if err != nil {
			t.Fatalf("ListSilences: %v", err)
		}
		return got
	}
	active := func(accountID string, at time.Time) []voiceops.Silence {
		t.Helper()
		got, err := s.Silences.ActiveSilences(ctx(t), accountID, at)
		if err != nil {
			t.Fatalf("ActiveSilences: %v", err)
		}
		return got
	}
	same := func(what string, got, want []voiceops.Silence) {
		t.Helper()
		norm := func(ss []voiceops.Silence) []voiceops.Silence {
			out := []voiceops.Silence{}
			for _, x := range ss {
				x.StartsAt, x.EndsAt, x.CreatedAt = x.StartsAt.UTC(), x.EndsAt.UTC(), x.CreatedAt.UTC()
				if len(x.Matchers) == 0 {
					x.Matchers = nil
				}
				out = append(out, x)
			}
			return out
		}
		if !reflect.DeepEqual(norm(got), norm(want)) {
			t.Errorf("%s:\n got %+v\nwant %+v", what, got, want)
		}
	}
	same("the list", list(a.ID, now), []voiceops.Silence{ended, inEffect, later})
	same("the silences not ended", active(a.ID, now), []voiceops.Silence{inEffect, later})
	same("another account's list", list(b.ID, now), []voiceops.Silence{other})
	same("at the end of one, it has ended", active(a.ID, inEffect.EndsAt), []voiceops.Silence{later})

	// Ending: one in effect is kept with its new end.
	endAt := now.Add(time.Minute)
	got, err := s.Silences.EndSilence(ctx(t), a.ID, inEffect.ID, endAt)
	wantEnded := inEffect
	wantEnded.EndsAt = endAt
	if err != nil {
		t.Fatalf("EndSilence: %v", err)
	}
	same("the ended silence", []voiceops.Silence{got}, []voiceops.Silence{wantEnded})
	same("after the end", active(a.ID, endAt), []voiceops.Silence{later})
	same("the list after the end", list(a.ID, endAt), []voiceops.Silence{ended, wantEnded, later})
	// Ending it again, or one that had ended, changes nothing.
	if got, err := s.Silences.EndSilence(ctx(t), a.ID, ended.ID, endAt); err != nil || !got.EndsAt.Equal(ended.EndsAt) {
		t.Errorf("ending an ended silence: %+v %v", got, err)
	}
	// One not started yet is removed.
	if _, err := s.Silences.EndSilence(ctx(t), a.ID, later.ID, endAt); err != nil {
		t.Fatalf("EndSilence of one not started: %v", err)
	}
	same("the list after removing one", list(a.ID, endAt), []voiceops.Silence{ended, wantEnded})
	if _, err := s.Silences.EndSilence(ctx(t), a.ID, later.ID, endAt); !errors.Is(err, voiceops.ErrNotFound) {
		t.Errorf("ending a removed silence: %v", err)
	}
	if _, err := s.Silences.EndSilence(ctx(t), a.ID, other.ID, endAt); !errors.Is(err, voiceops.ErrNotFound) {
		t.Errorf("ending another account's silence: %v", err)
	}
	same("the other account's silence stays", active(b.ID, endAt), []voiceops.Silence{other})
	// Retention.
	same("past the retention of the first", list(a.ID, ended.EndsAt.Add(voiceops.SilenceRetention)), []voiceops.Silence{wantEnded})
}

// testSilenceLimit: at most MaxActiveSilences not ended per account; ended
// ones take no place; of creates racing for the last place, one wins.
func testSilenceLimit(t *testing.T, newStores func(*testing.T) voiceops.Stores) {
	s := newStores(t)
	a := mustAccount(t, s)
	now := time.Now().UTC().Truncate(time.Millisecond)
	for i := range voiceops.MaxActiveSilences - 1 {
		x := newSilence(a.ID, now, now.Add(time.Hour))
		if i == 0 {
			x.EndsAt = now.Add(time.Second) // ends soon: frees a place then
		}
		if err := s.Silences.CreateSilence(ctx(t), x, now, nil); err != nil {
			t.Fatalf("silence %d: %v", i, err)
		}
	}
	if err := s.Silences.CreateSilence(ctx(t), newSilence(a.ID, now.Add(-2*time.Hour), now.Add(-time.Hour)), now, nil); err != nil {
		t.Fatalf("an ended silence takes no place: %v", err)
	}
	const racers = 8
	var wg sync.WaitGroup
	errs := make([]error, racers)
	for i := range racers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = s.Silences.CreateSilence(ctx(t), newSilence(a.ID, now, now.Add(time.Hour)), now, nil)
		}()
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, voiceops.ErrSilenceLimit) && !errors.Is(err, voiceops.ErrConflictingWrite):
			t.Errorf("a losing create: %v", err)
		}
	}
	if won != 1 {
		t.Fatalf("%d of %d creates racing for the last place won", won, racers)
	}
	if err := s.Silences.CreateSilence(ctx(t), newSilence(a.ID, now, now.Add(time.Hour)), now, nil); !errors.Is(err, voiceops.ErrSilenceLimit) {
		t.Fatalf("past the limit: %v", err)
	}
	later := now.Add(time.Second)
	if err := s.Silences.CreateSilence(ctx(t), newSilence(a.ID, later, later.Add(time.Hour)), later, nil); err != nil {
		t.Fatalf("once one has ended: %v", err)
	}
}

// testSilenceCheck: CreateSilence runs the caller's check once; a failed
// check is returned as is and writes nothing.
func testSilenceCheck(t *testing.T, newStores func(*testing.T) voiceops.Stores) {
	s := newStores(t)
	a := mustAccount(t, s)
	now := time.Now().UTC().Truncate(time.Millisecond)
	refused := voiceops.Invalid(voiceops.FieldError{Field: "matchers[0].value", Message: "no such project in this account"})
	calls := 0
	x := newSilence(a.ID, now, now.Add(time.Hour))
	err := s.Silences.CreateSilence(ctx(t), x, now, func() error { calls++; return refused })
	if !errors.Is(err, refused) || calls != 1 {
		t.Errorf("CreateSilence with a failing check: %v after %d calls, want the check's error after 1", err, calls)
	}
	got, err := s.Silences.ListSilences(ctx(t), a.ID, now)
	mustNil(t, "ListSilences", err)
	if len(got) != 0 {
		t.Errorf("a refused check wrote %d silences", len(got))
	}
	calls = 0
	mustNil(t, "CreateSilence with a passing check", s.Silences.CreateSilence(ctx(t), x, now, func() error { calls++; return nil }))
	got, err = s.Silences.ListSilences(ctx(t), a.ID, now)
	mustNil(t, "ListSilences", err)
	if calls != 1 || len(got) != 1 || got[0].ID != x.ID {
		t.Errorf("CreateSilence with a passing check: %d calls, listed %d; want 1 call and the silence", calls, len(got))
	}
}
