package memory

import (
	"context"
	"time"

	"github.com/voiceops/opsapi/shared/voiceops"
)

var _ voiceops.SilenceStore = (*Store)(nil)

func cloneSilence(s voiceops.Silence) voiceops.Silence {
	ms := make([]voiceops.SilenceMatcher, len(s.Matchers))
	for i, m := range s.Matchers {
		ms[i] = voiceops.SilenceMatcher{Name: m.Name, Value: clonePtr(m.Value)}
	}
	s.Matchers = ms
	return s
}

// kept reports whether the silence is still kept at now (SilenceRetention).
func kept(s voiceops.Silence, now time.Time) bool {
	return now.Before(s.EndsAt.Add(voiceops.SilenceRetention))
}

// CreateSilence counts and stores under the one lock.
func (s *Store) CreateSilence(_ context.Context, sil voiceops.Silence, now time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.accounts[sil.AccountID]; !ok {
		return voiceops.ErrNotFound
	}
	byID := s.silences[sil.AccountID]
	if _, dup := byID[sil.ID]; dup {
		return voiceops.ErrAlreadyExists
	}
	active := 0
	for _, x := range byID {
		if !x.Ended(now) {
			active++
		}
	}
	if active >= voiceops.MaxActiveSilences {
		return voiceops.ErrSilenceLimit
	}
	if s.silences == nil {
		s.silences = map[string]map[string]voiceops.Silence{}
	}
	if byID == nil {
		byID = map[string]voiceops.Silence{}
		s.silences[sil.AccountID] = byID
	}
	byID[sil.ID] = cloneSilence(sil)
	return nil
}

func (s *Store) ListSilences(_ context.Context, accountID string, now time.Time) ([]voiceops.Silence, error) {
	return s.silencesWhere(accountID, func(x voiceops.Silence) bool { return kept(x, now) }), nil
}

func (s *Store) ActiveSilences(_ context.Context, accountID string, at time.Time) ([]voiceops.Silence, error) {
	return s.silencesWhere(accountID, func(x voiceops.Silence) bool { return !x.Ended(at) }), nil
}

func (s *Store) silencesWhere(accountID string, keep func(voiceops.Silence) bool) []voiceops.Silence {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := []voiceops.Silence{}
	for _, x := range s.silences[accountID] {
		if keep(x) {
			out = append(out, cloneSilence(x))
		}
	}
	voiceops.SortSilences(out)
	return out
}

func (s *Store) EndSilence(_ context.Context, accountID, id string, at time.Time) (voiceops.Silence, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	x, ok := s.silences[accountID][id]
	if !ok || !kept(x, at) {
		return voiceops.Silence{}, voiceops.ErrNotFound
	}
	switch {
	case x.Ended(at):
	case at.Before(x.StartsAt):
		delete(s.silences[accountID], id)
		return voiceops.Silence{}, nil
	default:
		x.EndsAt = at.UTC().Truncate(time.Millisecond)
		s.silences[accountID][id] = x
	}
	return cloneSilence(x), nil
}
