package memory

import (
	"context"
	"slices"

	"github.com/voiceops/opsapi/shared/voiceops"
)

// Destinations returns the store of the accounts' destination policies,
// kept with the accounts (behind the same lock, so a policy is only stored
// for an account that exists).
func (s *Store) Destinations() voiceops.DestinationStore { return destinations{s} }

type destinations struct{ s *Store }

var _ voiceops.DestinationStore = destinations{}

func (d destinations) DestinationPolicy(_ context.Context, accountID string) (voiceops.DestinationPolicy, error) {
	d.s.mu.RLock()
	defer d.s.mu.RUnlock()
	p, ok := d.s.destinations[accountID]
	if !ok {
		return voiceops.DestinationPolicy{}, voiceops.ErrNotFound
	}
	return clonePolicy(p), nil
}

func (d destinations) SetDestinationPolicy(_ context.Context, accountID string, p *voiceops.DestinationPolicy) error {
	d.s.mu.Lock()
	defer d.s.mu.Unlock()
	if _, ok := d.s.accounts[accountID]; !ok {
		return voiceops.ErrNotFound
	}
	if p == nil {
		delete(d.s.destinations, accountID)
		return nil
	}
	if d.s.destinations == nil {
		d.s.destinations = map[string]voiceops.DestinationPolicy{}
	}
	d.s.destinations[accountID] = clonePolicy(*p)
	return nil
}

// clonePolicy copies p, an empty list as nil (as DynamoDB reads it back).
func clonePolicy(p voiceops.DestinationPolicy) voiceops.DestinationPolicy {
	var c voiceops.DestinationPolicy
	if len(p.Countries) > 0 {
		c.Countries = slices.Clone(p.Countries)
	}
	if len(p.Allow) > 0 {
		c.Allow = slices.Clone(p.Allow)
	}
	return c
}
