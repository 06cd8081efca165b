package voiceops

import (
	"bytes"
	"encoding/json"
	"time"
)

// Outcome is what one evaluation of a rule found.
type Outcome struct {
	Value  int64
	NoData bool // nothing was reported for the rule's scope in the window
	Failed bool // the evaluation could not complete (store error, timeout)
	// Silenced: a silence covers the rule now; no event is sent.
	Silenced bool
}

// Evaluated returns the rule after an evaluation at `at` with outcome o, and
// the event the transition sends, if any (docs/alerting.md):
// into alert from any state sends alerts.triggered; out of alert to any
// state sends alerts.resolved; a firing rule stays alert through failed
// evaluations, any other state becomes unknown. since is when the current
// state began. Under a silence (o.Silenced) no event is sent; the first
// evaluation outside one sends the event of the change the receivers
// missed, if the rule has not come back to the state they know
// (SilencedFrom). The returned rule's Version is the next one.
//
// The times are the evaluation instant itself, to the millisecond (the
// precision of every time the API shows), and never before the rule's
// created_at: an evaluation that read the rule just as it was created (or a
// clock a little behind the creator's) reports created_at instead.
func (r AlertRule) Evaluated(o Outcome, at time.Time) (AlertRule, *AlertEvent) {
	at = at.UTC().Truncate(time.Millisecond)
	if at.Before(r.CreatedAt) {
		at = r.CreatedAt
	}
	next := r
	next.Version = r.Version + 1
	next.Change, next.Wake = nil, false // an evaluation never wakes another
	switch {
	case o.Failed && r.State == StateAlert:
		// The alert keeps firing on what was last measured.
		return next, nil
	case o.Failed:
		next.State = StateUnknown
	case o.NoData:
		next.State, next.CurrentValue = StateNoData, nil
	default:
		v := o.Value
		next.CurrentValue = &v
		next.State = StateOK
		if r.Operator.Breached(v, r.Threshold) {
			next.State = StateAlert
		}
	}
	t := at
	next.LastEvaluatedAt = &t
	changed := next.State != r.State
	if changed {
		since := at
		next.Since = &since
	}
	// Events follow what the receivers were told, not the stored state:
	// under a silence none is sent and the state they know is kept;
	// outside one, the event held back (or none, when the rule came back
	// to that state meanwhile) goes out.
	heard := r.Announced()
	next.SilencedFrom = ""
	var ev *AlertEvent
	if o.Silenced {
		if (heard == StateAlert) != (next.State == StateAlert) {
			next.SilencedFrom = heard
		}
	} else {
		ev = TransitionEvent(heard, &next, at)
	}
	if changed {
		var eventID string
		if ev != nil {
			eventID = ev.ID
		}
		next.Change = change(r, next, at, eventID)
		next.Change.Silenced = o.Silenced
	}
	return next, ev
}

// EvaluationChanged reports whether next, the result of r.Evaluated, differs
// from r in what an evaluation decides: the state, the current value, or
// what a silence held back (SilencedFrom). Only
// then is the rule's item rewritten; an unchanged evaluation is recorded by
// the scope's evaluation mark (EvaluationStore), not by a write per rule.
func (r AlertRule) EvaluationChanged(next AlertRule) bool {
	if r.State != next.State || r.SilencedFrom != next.SilencedFrom || (r.CurrentValue == nil) != (next.CurrentValue == nil) {
		return true
	}
	return r.CurrentValue != nil && *r.CurrentValue != *next.CurrentValue
}

// WithMark returns r with last_evaluated_at moved to mark, the instant its
// scope's rules were last evaluated (EvaluationStore), when that
// evaluation covered r: r is enabled and was not created or changed after
// the mark, and the mark is later than r's own last_evaluated_at.
func (r AlertRule) WithMark(mark time.Time) AlertRule {
	if !r.Enabled || mark.IsZero() || mark.Before(r.UpdatedAt) || mark.Before(r.CreatedAt) ||
		(r.LastEvaluatedAt != nil && !mark.After(*r.LastEvaluatedAt)) {
		return r
	}
	m := mark.UTC()
	r.LastEvaluatedAt = &m
	return r
}

// TransitionEvent returns the event of a change from state prev to rule
// r's state, or nil when the change sends none. An event takes the rule's
// next sequence number: r.Sequence is moved on, to be written with r.
func TransitionEvent(prev State, r *AlertRule, at time.Time) *AlertEvent {
	var typ EventType
	switch {
	case r.State == StateAlert && prev != StateAlert:
		typ = EventTriggered
	case prev == StateAlert && r.State != StateAlert:
		typ = EventResolved
	default:
		return nil
	}
	r.Sequence++
	e := NewAlertEvent(typ, *r, prev, at, false)
	return &e
}

// EventBody is the JSON delivered to webhook endpoints.
type EventBody struct {
	EventType EventType `json:"event_type"`
	EventID   string    `json:"event_id"`
	CreatedAt string    `json:"created_at"`
	Test      bool      `json:"test,omitempty"`
	Alert     EventRule `json:"alert"`
}

// EventRule is the "alert" object of an event body.
type EventRule struct {
	ID             string  `json:"id"`
	Name           string  `json:"name"`
	ProjectID      *string `json:"project_id"`
	Metric         Metric  `json:"metric"`
	Operator       string  `json:"operator"`
	ThresholdValue int64   `json:"threshold_value"`
	WindowDuration Window  `json:"window_duration"`
	CurrentValue   *int64  `json:"current_value"`
	PreviousState  State   `json:"previous_state"`
	CurrentState   State   `json:"current_state"`
	TriggeredAt    string  `json:"triggered_at,omitempty"`
	ResolvedAt     string  `json:"resolved_at,omitempty"`
	// Sequence numbers the rule's events 1, 2, 3...; with created_at (the
	// evaluation instant) it orders a rule's events however they arrive.
	// Test events carry 0.
	Sequence int64 `json:"sequence"`
}

// TimeFormat is how every time is written: UTC with milliseconds.
const TimeFormat = "2006-01-02T15:04:05.000Z"

// NewAlertEvent builds an event of rule r (in its new state) that left
// state prev at `at`, with its body, ready to store.
func NewAlertEvent(typ EventType, r AlertRule, prev State, at time.Time, test bool) AlertEvent {
	id := NewID(PrefixEvent)
	ts := at.UTC().Format(TimeFormat)
	body := EventBody{EventType: typ, EventID: id, CreatedAt: ts, Test: test, Alert: EventRule{
		ID: r.ID, Name: r.Name, ProjectID: r.ProjectID, Metric: r.Metric, Operator: string(r.Operator),
		ThresholdValue: r.Threshold, WindowDuration: r.Window, CurrentValue: r.CurrentValue,
		PreviousState: prev, CurrentState: r.State, Sequence: r.Sequence,
	}}
	if test {
		body.Alert.Sequence = 0
	}
	if typ == EventTriggered {
		body.Alert.TriggeredAt = ts
	} else {
		body.Alert.ResolvedAt = ts
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // keep ">" readable in the operator
	_ = enc.Encode(body)     // plain structs: cannot fail
	b := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	return AlertEvent{ID: id, AccountID: r.AccountID, RuleID: r.ID, Type: typ, CreatedAt: at, Body: b}
}
