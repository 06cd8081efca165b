package memory

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	"github.com/voiceops/opsapi/shared/voiceops"
)

// dniNumber is one number of a DNI pool.
type dniNumber struct {
	hold       time.Duration
	until      time.Time // zero: free
	attributes []byte    // JSON of the reservation's attributes
}

// DNI returns the store of the projects' DNI pools, kept with the rest of
// the Store's data, behind the same lock.
func (s *Store) DNI() voiceops.DNIStore { return dniStore{s} }

type dniStore struct{ s *Store }

var _ voiceops.DNIStore = dniStore{}

func (d dniStore) AddNumbers(_ context.Context, accountID, projectID string, numbers []string, hold time.Duration) error {
	if err := voiceops.ValidateDNINumbers(numbers, hold); err != nil {
		return err
	}
	s := d.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.projects[accountID][projectID]; !ok {
		return voiceops.ErrNotFound
	}
	if s.dni == nil {
		s.dni = map[[2]string]map[string]*dniNumber{}
	}
	k := [2]string{accountID, projectID}
	if s.dni[k] == nil {
		s.dni[k] = map[string]*dniNumber{}
	}
	for _, n := range numbers {
		if e, ok := s.dni[k][n]; ok {
			e.hold = voiceops.DNIHold(hold)
			continue
		}
		s.dni[k][n] = &dniNumber{hold: voiceops.DNIHold(hold)}
	}
	return nil
}

func (d dniStore) Reserve(_ context.Context, accountID, projectID string, attributes map[string]any, now time.Time) (string, time.Time, error) {
	b, err := json.Marshal(nonNilAttrs(attributes))
	if err != nil {
		return "", time.Time{}, voiceops.Internal(err)
	}
	s := d.s
	s.mu.Lock()
	defer s.mu.Unlock()
	pool := s.dni[[2]string{accountID, projectID}]
	numbers := make([]string, 0, len(pool))
	for n := range pool {
		numbers = append(numbers, n)
	}
	slices.Sort(numbers)
	for _, n := range numbers {
		e := pool[n]
		if e.until.IsZero() || !e.until.After(now) {
			e.until = now.Add(e.hold).UTC().Truncate(time.Millisecond)
			e.attributes = b
			return n, e.until, nil
		}
	}
	return "", time.Time{}, voiceops.ErrNoAvailableNumber
}

func (d dniStore) Consume(_ context.Context, accountID, projectID, number string, now time.Time) (map[string]any, bool, error) {
	s := d.s
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.dni[[2]string{accountID, projectID}][number]
	if !ok || e.until.IsZero() || !e.until.After(now) {
		return nil, false, nil
	}
	b := e.attributes
	e.until, e.attributes = time.Time{}, nil
	var attrs map[string]any
	if err := json.Unmarshal(b, &attrs); err != nil {
		return nil, false, voiceops.Internal(err)
	}
	return nonNilAttrs(attrs), true, nil
}

func nonNilAttrs(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}
