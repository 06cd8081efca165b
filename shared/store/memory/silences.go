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

// CreateSilence runs the caller's check, then counts and stores under the
// one lock.
func (s *Store) CreateSilence(_ context.Context, sil voiceops.Silence, now time.Time, check func() error) error {
	if check != nil {
		if err := check(); err != nil {
			return err
		}
	}
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

// EndSilence ends the silence under the one lock, then wakes the scopes
// of the rules it selects (WakeWith), as the end's own write would.
func (s *Store) EndSilence(ctx context.Context, accountID, id string, at time.Time) (voiceops.Silence, error) {
	ended, wake, err := s.endSilence(accountID, id, at)
	if err != nil {
		return ended, err
	}
	for _, project := range wake {
		s.wakeScope(ctx, accountID, project, at)
	}
	return ended, nil
}

func (s *Store) endSilence(accountID, id string, at time.Time) (voiceops.Silence, []string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	x, ok := s.silences[accountID][id]
	if !ok || !kept(x, at) {
		return voiceops.Silence{}, nil, voiceops.ErrNotFound
	}
	switch {
	case x.Ended(at):
		return cloneSilence(x), nil, nil
	case at.Before(x.StartsAt):
		delete(s.silences[accountID], id)
		return voiceops.Silence{}, nil, nil
	}
	x.EndsAt = at.UTC().Truncate(time.Millisecond)
	s.silences[accountID][id] = x
	rules := make([]voiceops.AlertRule, 0, len(s.rules[accountID]))
	for _, r := range s.rules[accountID] {
		rules = append(rules, r)
	}
	voiceops.SortRules(rules)
	return cloneSilence(x), x.WakeScopes(rules), nil
}
