package memory

import (
	"context"
	"slices"
	"strings"

	"github.com/voiceops/opsapi/shared/voiceops"
)

// liveDeliveryLocked returns a delivery of the endpoint younger than
// DeliveryLogTTL; the caller holds s.mu.
func (s *Store) liveDeliveryLocked(accountID, endpointID, deliveryID string) (voiceops.Delivery, bool) {
	d, ok := s.deliveries[accountID][deliveryID]
	if !ok || d.EndpointID != endpointID || s.expired(d.CreatedAt) {
		return voiceops.Delivery{}, false
	}
	return d, true
}

func (s *Store) CreateDeliveries(_ context.Context, ds []voiceops.Delivery) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, d := range ds {
		if _, ok := s.deliveries[d.AccountID][d.ID]; ok {
			continue
		}
		s.putDeliveryLocked(d)
	}
	return nil
}

// putDeliveryLocked stores a delivery; the caller holds s.mu for writing.
func (s *Store) putDeliveryLocked(d voiceops.Delivery) {
	if s.deliveries[d.AccountID] == nil {
		s.deliveries[d.AccountID] = map[string]voiceops.Delivery{}
	}
	s.deliveries[d.AccountID][d.ID] = copyDelivery(d)
}

func (s *Store) GetDelivery(_ context.Context, accountID, endpointID, deliveryID string) (voiceops.Delivery, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	d, ok := s.liveDeliveryLocked(accountID, endpointID, deliveryID)
	if !ok {
		return voiceops.Delivery{}, voiceops.ErrNotFound
	}
	return copyDelivery(d), nil
}

func (s *Store) ListDeliveries(_ context.Context, accountID, endpointID string, limit int) ([]voiceops.Delivery, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []voiceops.Delivery
	for _, d := range s.deliveries[accountID] {
		if d.EndpointID == endpointID && !s.expired(d.CreatedAt) {
			out = append(out, d)
		}
	}
	slices.SortFunc(out, func(a, b voiceops.Delivery) int {
		if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(b.ID, a.ID)
	})
	out = out[:min(len(out), max(limit, 0))]
	for i := range out {
		out[i] = copyDelivery(out[i])
	}
	return out, nil
}

func (s *Store) RecordAttempt(_ context.Context, d voiceops.Delivery, expectAttempts int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, ok := s.liveDeliveryLocked(d.AccountID, d.EndpointID, d.ID)
	if !ok {
		return voiceops.ErrNotFound
	}
	if len(cur.Attempts) != expectAttempts {
		return voiceops.ErrConflictingWrite
	}
	s.deliveries[d.AccountID][d.ID] = copyDelivery(d)
	return nil
}

func copyDelivery(d voiceops.Delivery) voiceops.Delivery {
	d.Attempts = slices.Clone(d.Attempts)
	d.NextAttemptAt = clonePtr(d.NextAttemptAt)
	return d
}
