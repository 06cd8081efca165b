package dynamo_test

import (
	"errors"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/store/dynamo"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// TestEndSilenceReadsOnlyTheNotEnded: ending a silence in effect reads the
// account's silences not ended, not the ended ones it keeps for
// SilenceRetention (a busy account's history is not read by every
// DELETE); ending one already ended, or none, reads the history too and
// answers as before.
func TestEndSilenceReadsOnlyTheNotEnded(t *testing.T) {
	c := client(t)
	names := newTables(t, c)
	db := &countingDB{DB: c}
	s := dynamo.NewConfig(db, names.Config, names.Deliveries) // writes no wake-ups: no rules read
	ctx := t.Context()
	now := time.Now().UTC().Truncate(time.Millisecond)
	acct := voiceops.Account{ID: voiceops.NewID(voiceops.PrefixAccount), Name: "silences", CreatedAt: now}
	if err := s.CreateAccount(ctx, acct); err != nil {
		t.Fatal(err)
	}
	silence := func(starts, ends time.Time) voiceops.Silence {
		x := voiceops.Silence{ID: voiceops.NewID(voiceops.PrefixSilence), AccountID: acct.ID, StartsAt: starts, EndsAt: ends, CreatedAt: starts}
		if err := s.CreateSilence(ctx, x, now, nil); err != nil {
			t.Fatal(err)
		}
		return x
	}
	var ended []voiceops.Silence
	for i := range 6 {
		ended = append(ended, silence(now.Add(-time.Duration(i+2)*time.Hour), now.Add(-time.Duration(i+1)*time.Hour)))
	}
	inEffect := silence(now.Add(-time.Hour), now.Add(time.Hour))
	db.takeScanned()

	got, err := s.EndSilence(ctx, acct.ID, inEffect.ID, now)
	if err != nil || !got.EndsAt.Equal(now) {
		t.Fatalf("EndSilence in effect: %+v, %v", got, err)
	}
	if n := db.takeScanned(); n != 1 {
		t.Errorf("ending the silence in effect read %d items, want 1 (the one not ended; not the %d ended)", n, len(ended))
	}
	if got, err := s.EndSilence(ctx, acct.ID, ended[0].ID, now); err != nil || !got.EndsAt.Equal(ended[0].EndsAt) {
		t.Errorf("EndSilence of an ended one: %+v, %v, want it as it was", got, err)
	}
	if _, err := s.EndSilence(ctx, acct.ID, voiceops.NewID(voiceops.PrefixSilence), now); !errors.Is(err, voiceops.ErrNotFound) {
		t.Errorf("EndSilence of none: %v, want not found", err)
	}
}
