package voiceops

import "context"

// NumberType is a phone number's type, as libphonenumber tells it
// (shared/calls/destination names them and decides which are refused).
type NumberType string

// DestinationPolicy is an account's outbound destination policy as the
// operator set it: the record the config table keeps. What it allows is
// shared/calls/destination's to decide.
type DestinationPolicy struct {
	// Countries the account may call (ISO 3166-1 alpha-2, sorted); empty:
	// those of its region's stack (destination.DefaultCountries).
	Countries []string
	// Allow are the refusable types the account may call anyway (sorted;
	// destination.Refusable).
	Allow []NumberType
}

// DestinationReader reads the accounts' destination policies.
type DestinationReader interface {
	// DestinationPolicy is the account's policy; ErrNotFound when the
	// operator set none.
	DestinationPolicy(ctx context.Context, accountID string) (DestinationPolicy, error)
}

// DestinationStore keeps the accounts' destination policies (the config
// table).
type DestinationStore interface {
	DestinationReader
	// SetDestinationPolicy sets (p non-nil) or removes (nil) the account's
	// policy; ErrNotFound, and nothing stored, for an account that does
	// not exist.
	SetDestinationPolicy(ctx context.Context, accountID string, p *DestinationPolicy) error
}
