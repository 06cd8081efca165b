package voiceops

import (
	"context"
	"time"
)

// DNI (dynamic number insertion): each project has a pool of phone numbers.
// A reservation takes a free number of the pool for the project's hold time
// (DefaultDNIHold unless the pool sets its own) and carries attributes; it
// ends when a call arrives on that number (the attributes become the
// conversation's integration_attributes) or when it expires.
type DNIStore interface {
	// AddNumbers adds numbers (E.164) to a project's pool, or sets the hold
	// of numbers already in it; reservations in progress are kept. hold <= 0
	// means DefaultDNIHold. ErrNotFound when the project does not exist.
	AddNumbers(ctx context.Context, accountID, projectID string, numbers []string, hold time.Duration) error
	// Reserve atomically takes a number of the pool that is free (never
	// reserved, consumed, or its reservation expired at now): two
	// concurrent reservations never get the same number.
	// ErrNoAvailableNumber when there is none.
	Reserve(ctx context.Context, accountID, projectID string, attributes map[string]any, now time.Time) (number string, expires time.Time, err error)
	// Consume ends the live reservation of number (one that has not expired
	// at now) and returns its attributes; ok is false when the number has
	// none (not in the pool, never reserved, consumed or expired).
	Consume(ctx context.Context, accountID, projectID, number string, now time.Time) (attributes map[string]any, ok bool, err error)
}

// DefaultDNIHold is how long a reservation lasts unless its pool says.
const DefaultDNIHold = 10 * time.Minute

// MaxDNIHold bounds a pool's hold time.
const MaxDNIHold = 24 * time.Hour

// ErrNoAvailableNumber: every number of the pool is reserved (or the
// project has no pool).
var ErrNoAvailableNumber = &Error{Kind: KindNotFound, Message: "no available number"}

// ValidE164 reports whether s is written as an E.164 number: '+', then 2 to
// 15 digits, the first not 0. E.164 allows at most 15 digits, country code
// included; the shortest country code is one digit (never 0) and a number
// needs at least one more. It is the syntax only, the one rule of every
// number the service reads; whether the number exists is phone.Valid's
// question (libphonenumber).
func ValidE164(s string) bool {
	return len(s) >= 3 && len(s) <= 16 && s[0] == '+' && s[1] != '0' && every(s[1:], isDigit)
}

// ValidateDNINumbers checks the numbers and hold given to AddNumbers.
func ValidateDNINumbers(numbers []string, hold time.Duration) error {
	if len(numbers) == 0 {
		return Invalid(FieldError{Field: "numbers", Message: "at least one number is required"})
	}
	for _, n := range numbers {
		if !ValidE164(n) {
			return Invalid(FieldError{Field: "numbers", Message: "must be E.164 numbers such as +441632960100; got " + n})
		}
	}
	if hold > MaxDNIHold {
		return Invalid(FieldError{Field: "hold", Message: "must be at most 24h"})
	}
	return nil
}

// DNIHold returns the hold to use for a pool's configured hold.
func DNIHold(hold time.Duration) time.Duration {
	if hold <= 0 {
		return DefaultDNIHold
	}
	return hold
}
