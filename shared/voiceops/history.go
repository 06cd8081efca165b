package voiceops

import (
	"context"
	"strconv"
	"strings"
	"time"
)

// StateChange is one entry of a rule's state history (GET
// /v1/alert-rules/{id}/history): the rule went from one state to another
// at an instant, with the value measured then and the event the change
// sent, if any. It is written in the same atomic write as the rule's new
// state (RuleStore.UpdateRule, from AlertRule.Change), and kept as long as
// the delivery log (DeliveryLogTTL).
type StateChange struct {
	AccountID string
	RuleID    string
	At        time.Time
	From      State
	To        State
	Value     *int64
	EventID   string // "" when the change sent no event
	// Silenced: a silence covered the rule; the change sent no event.
	Silenced bool
	// Version is the rule's version the change produced: with At it orders
	// two changes of one millisecond and keys the entry, so a retried
	// write stores it once.
	Version int64
}

// MaxHistoryPage bounds a page of history.
const MaxHistoryPage = 100

// DeliveryRef names one delivery: the delivery of an event to an endpoint.
type DeliveryRef struct {
	EndpointID string
	EventID    string
}

// HistoryStore reads the rules' state histories.
type HistoryStore interface {
	// RuleHistory returns the rule's state changes of the last
	// DeliveryLogTTL, newest first (by At, then Version), at most limit,
	// starting after the entry the cursor names ("" for the newest). next
	// is the cursor of the following page, "" at the end. A cursor not
	// made by this method is ErrInvalidCursor.
	RuleHistory(ctx context.Context, accountID, ruleID, cursor string, limit int) (changes []StateChange, next string, err error)
	// GetDeliveries returns the deliveries of the account that exist
	// among refs (missing and expired ones are left out), in no order.
	GetDeliveries(ctx context.Context, accountID string, refs []DeliveryRef) ([]Delivery, error)
}

// change returns the history entry of the transition from r to next at
// `at`, nil when the state did not change.
func change(r, next AlertRule, at time.Time, eventID string) *StateChange {
	if next.State == r.State {
		return nil
	}
	return &StateChange{
		AccountID: r.AccountID, RuleID: r.ID, At: at, From: r.State, To: next.State,
		Value: clone(next.CurrentValue), EventID: eventID, Version: next.Version,
	}
}

func clone[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// HistoryCursor is the cursor that resumes a history after c: the
// millisecond of c and its version, "<unix ms>_<version>".
func HistoryCursor(c StateChange) string {
	return strconv.FormatInt(c.At.UnixMilli(), 10) + "_" + strconv.FormatInt(c.Version, 10)
}

// ParseHistoryCursor reads a HistoryCursor; ok is false for anything else.
func ParseHistoryCursor(s string) (at time.Time, version int64, ok bool) {
	ms, v, found := strings.Cut(s, "_")
	if !found || len(ms) > 15 || len(v) > 19 || !every(ms, isDigit) || !every(v, isDigit) || ms == "" || v == "" {
		return time.Time{}, 0, false
	}
	n, err1 := strconv.ParseInt(ms, 10, 64)
	version, err2 := strconv.ParseInt(v, 10, 64)
	if err1 != nil || err2 != nil {
		return time.Time{}, 0, false
	}
	return time.UnixMilli(n).UTC(), version, true
}

// HistoryBefore reports whether a comes before b in a history's order
// (newest first: later At, then higher Version).
func HistoryBefore(a, b StateChange) bool {
	if !a.At.Equal(b.At) {
		return a.At.After(b.At)
	}
	return a.Version > b.Version
}
