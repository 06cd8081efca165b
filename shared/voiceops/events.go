package voiceops

import (
	"context"
	"crypto/sha256"
	"math/big"
	"time"
)

// AlertEvent is one alert event: a rule's transition into or out of alert,
// or a test event for one endpoint. It is stored in the same write as the
// state change that caused it (the outbox), then fanned out into one
// Delivery per subscribed, enabled endpoint. Body is built once, so every
// endpoint and every retry receives the very same bytes.
type AlertEvent struct {
	ID        string // evt_...
	AccountID string
	RuleID    string
	Type      EventType
	CreatedAt time.Time
	Body      []byte
	// EndpointID is set on test events: they go to that endpoint alone.
	EndpointID string
	// FannedOut is set once its deliveries exist and are queued; until then
	// the evaluator's repair pass finds it among the pending events.
	FannedOut bool
}

// EventStore holds alert events. Events are created by RuleStore writes
// (with the state change) or by PutEvent (test events).
type EventStore interface {
	// PutEvent stores an event that has no state change to go with it
	// (ErrAlreadyExists when its ID exists) and, in the same atomic write,
	// the deliveries ds of it (a test event's one delivery, at most
	// MaxEventDeliveries): the event and its deliveries exist together or
	// not at all, so a fan-out of the event finds its deliveries made.
	PutEvent(ctx context.Context, e AlertEvent, ds ...Delivery) error
	GetEvent(ctx context.Context, accountID, eventID string) (AlertEvent, error)
	// PendingEvents returns events not yet fanned out that were created at
	// or before createdBefore, oldest first, at most limit.
	PendingEvents(ctx context.Context, createdBefore time.Time, limit int) ([]AlertEvent, error)
	// MarkFannedOut records that an event's deliveries exist and are queued.
	MarkFannedOut(ctx context.Context, accountID, eventID string) error
}

// MaxEventDeliveries bounds the deliveries PutEvent writes with an event
// (one DynamoDB transaction holds at most 100 items).
const MaxEventDeliveries = 99

// DeliveryStatus is where a delivery stands.
type DeliveryStatus string

const (
	DeliveryPending   DeliveryStatus = "pending"   // an attempt is queued
	DeliveryDelivered DeliveryStatus = "delivered" // a 2xx was received
	DeliveryFailed    DeliveryStatus = "failed"    // a final failure or the schedule is spent
	DeliverySkipped   DeliveryStatus = "skipped"   // the endpoint was deleted or disabled
)

// DeliveryAttempt is one entry of the delivery log: never a body or secret.
type DeliveryAttempt struct {
	Number     int // 1-based
	At         time.Time
	StatusCode int // 0 when no response was received
	DurationMS int64
	Error      string
}

// Delivery is one event on its way to one endpoint.
type Delivery struct {
	ID         string // dlv_..., derived from (event, endpoint) so a fan-out is idempotent
	AccountID  string
	EndpointID string
	EventID    string
	EventType  EventType
	Test       bool
	Status     DeliveryStatus
	Attempts   []DeliveryAttempt
	// NextAttemptAt is when the queued attempt is due (pending only).
	NextAttemptAt *time.Time
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

// DeliveryLogTTL is how long deliveries are kept.
const DeliveryLogTTL = 30 * 24 * time.Hour

// DeliveryStore holds deliveries and their logs.
//
// RecordAttempt is the only write after creation, and it is conditional on
// the number of attempts stored: that count is the token that lets exactly
// one holder of a queue message claim attempt N (the write that moves the
// count from N-1 to N), so an at-least-once queue never sends an attempt
// number twice (shared/alerts/delivery documents the whole protocol).
type DeliveryStore interface {
	// CreateDeliveries stores new pending deliveries. A delivery whose ID
	// already exists is left as it is (fan-out is idempotent).
	CreateDeliveries(ctx context.Context, ds []Delivery) error
	// GetDelivery returns a delivery of the endpoint, ErrNotFound when it is
	// missing or older than DeliveryLogTTL.
	GetDelivery(ctx context.Context, accountID, endpointID, deliveryID string) (Delivery, error)
	// ListDeliveries returns the endpoint's deliveries of the last
	// DeliveryLogTTL, newest first (by CreatedAt, then ID), at most limit.
	ListDeliveries(ctx context.Context, accountID, endpointID string, limit int) ([]Delivery, error)
	// RecordAttempt replaces the delivery if its stored copy has exactly
	// expectAttempts attempts, else ErrConflictingWrite (ErrNotFound when
	// there is none).
	RecordAttempt(ctx context.Context, d Delivery, expectAttempts int) error
}

// Open reports whether the attempt is claimed but has no result yet: no
// response and no error recorded. Every finished attempt has a status code
// or an error text.
func (a DeliveryAttempt) Open() bool { return a.StatusCode == 0 && a.Error == "" }

// DeliveryID returns the ID of the delivery of an event to an endpoint:
// "dlv_" and 22 base62 characters of SHA-256(eventID, endpointID), so a
// repeated fan-out finds the deliveries it made before.
func DeliveryID(eventID, endpointID string) string {
	sum := sha256.Sum256([]byte(eventID + "\x00" + endpointID))
	n := new(big.Int).SetBytes(sum[:])
	base := big.NewInt(62)
	out := make([]byte, 22)
	mod := new(big.Int)
	for i := range out {
		n.DivMod(n, base, mod)
		out[i] = idAlphabet[mod.Int64()]
	}
	return PrefixDelivery + string(out)
}
