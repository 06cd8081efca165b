package memory

import (
	"context"
	"slices"

	"github.com/voiceops/opsapi/shared/voiceops"
)

var _ voiceops.HistoryStore = (*Store)(nil)

// putChangeLocked stores the history entry of a rule write (UpdateRule).
func (s *Store) putChangeLocked(r voiceops.AlertRule) {
	if r.Change == nil {
		return
	}
	c := *r.Change
	c.AccountID, c.RuleID, c.Version = r.AccountID, r.ID, r.Version
	c.Value = clonePtr(c.Value)
	if s.history == nil {
		s.history = map[string]map[string][]voiceops.StateChange{}
	}
	byRule := s.history[r.AccountID]
	if byRule == nil {
		byRule = map[string][]voiceops.StateChange{}
		s.history[r.AccountID] = byRule
	}
	byRule[r.ID] = append(byRule[r.ID], c)
}

// RuleHistory returns the rule's entries of the last DeliveryLogTTL,
// newest first, after the cursor's.
func (s *Store) RuleHistory(_ context.Context, accountID, ruleID, cursor string, limit int) ([]voiceops.StateChange, string, error) {
	var after *voiceops.StateChange
	if cursor != "" {
		at, v, ok := voiceops.ParseHistoryCursor(cursor)
		if !ok {
			return nil, "", voiceops.ErrInvalidCursor
		}
		after = &voiceops.StateChange{At: at, Version: v}
	}
	s.mu.RLock()
	all := slices.Clone(s.history[accountID][ruleID])
	s.mu.RUnlock()
	oldest := s.now().Add(-voiceops.DeliveryLogTTL)
	slices.SortFunc(all, func(a, b voiceops.StateChange) int {
		switch {
		case voiceops.HistoryBefore(a, b):
			return -1
		case voiceops.HistoryBefore(b, a):
			return 1
		}
		return 0
	})
	out := []voiceops.StateChange{}
	for _, c := range all {
		if !c.At.After(oldest) || (after != nil && !voiceops.HistoryBefore(*after, c)) {
			continue
		}
		if len(out) == limit {
			return out, voiceops.HistoryCursor(out[len(out)-1]), nil
		}
		c.Value = clonePtr(c.Value)
		out = append(out, c)
	}
	return out, "", nil
}

// GetDeliveries returns the account's deliveries among refs.
func (s *Store) GetDeliveries(_ context.Context, accountID string, refs []voiceops.DeliveryRef) ([]voiceops.Delivery, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []voiceops.Delivery
	for _, ref := range refs {
		d, ok := s.liveDeliveryLocked(accountID, ref.EndpointID, voiceops.DeliveryID(ref.EventID, ref.EndpointID))
		if !ok {
			continue
		}
		out = append(out, copyDelivery(d))
	}
	return out, nil
}
