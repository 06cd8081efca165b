package memory

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/voiceops/opsapi/shared/voiceops"
)

// putEventLocked stores a new event, replacing nothing: the caller holds
// s.mu for writing and has checked that the ID is free (or writes the event
// together with a state change under the same lock, which is how the
// outbox's "written together" looks in memory).
func (s *Store) putEventLocked(e voiceops.AlertEvent) {
	if s.events[e.AccountID] == nil {
		s.events[e.AccountID] = map[string]voiceops.AlertEvent{}
	}
	s.events[e.AccountID][e.ID] = copyEvent(e)
}

// eventLiveLocked reports whether an event exists and is younger than
// DeliveryLogTTL; the caller holds s.mu.
func (s *Store) eventLiveLocked(accountID, eventID string) (voiceops.AlertEvent, bool) {
	e, ok := s.events[accountID][eventID]
	if !ok || s.expired(e.CreatedAt) {
		return voiceops.AlertEvent{}, false
	}
	return e, true
}

// expired reports whether a record created at t has outlived the delivery
// log's TTL.
func (s *Store) expired(t time.Time) bool {
	return !t.Add(voiceops.DeliveryLogTTL).After(s.now())
}

func (s *Store) PutEvent(_ context.Context, e voiceops.AlertEvent, ds ...voiceops.Delivery) error {
	if len(ds) > voiceops.MaxEventDeliveries {
		return fmt.Errorf("memory: PutEvent: %d deliveries with event %s: at most %d", len(ds), e.ID, voiceops.MaxEventDeliveries)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.eventLiveLocked(e.AccountID, e.ID); ok {
		return voiceops.ErrAlreadyExists
	}
	for _, d := range ds {
		if _, ok := s.deliveries[d.AccountID][d.ID]; ok {
			return fmt.Errorf("memory: PutEvent: a delivery of the new event %s already exists", e.ID)
		}
	}
	s.putEventLocked(e)
	for _, d := range ds {
		s.putDeliveryLocked(d)
	}
	return nil
}

func (s *Store) GetEvent(_ context.Context, accountID, eventID string) (voiceops.AlertEvent, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	e, ok := s.eventLiveLocked(accountID, eventID)
	if !ok {
		return voiceops.AlertEvent{}, voiceops.ErrNotFound
	}
	return copyEvent(e), nil
}

func (s *Store) PendingEvents(_ context.Context, createdBefore time.Time, limit int) ([]voiceops.AlertEvent, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []voiceops.AlertEvent
	for _, byID := range s.events {
		for _, e := range byID {
			if !e.FannedOut && !e.CreatedAt.After(createdBefore) && !s.expired(e.CreatedAt) {
				out = append(out, e)
			}
		}
	}
	slices.SortFunc(out, func(a, b voiceops.AlertEvent) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	out = out[:min(len(out), max(limit, 0))]
	for i := range out {
		out[i] = copyEvent(out[i])
	}
	return out, nil
}

func (s *Store) MarkFannedOut(_ context.Context, accountID, eventID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.eventLiveLocked(accountID, eventID)
	if !ok {
		return voiceops.ErrNotFound
	}
	e.FannedOut = true
	s.events[accountID][eventID] = e
	return nil
}

func copyEvent(e voiceops.AlertEvent) voiceops.AlertEvent {
	e.Body = slices.Clone(e.Body)
	return e
}
