package voiceops

import (
	"time"
)

// Limits of the studio host (docs/api.md, "Limits").
const (
	MaxRulesPerAccount     = 10
	MaxEndpointsPerAccount = 10
	MaxNameLength          = 255
	MaxThreshold           = 1<<31 - 1
)

// Operator compares a metric value with the threshold.
type Operator string

const (
	OpGreater      Operator = ">"
	OpLess         Operator = "<"
	OpGreaterEqual Operator = ">="
	OpLessEqual    Operator = "<="
)

// Operators lists every operator.
var Operators = []Operator{OpGreater, OpLess, OpGreaterEqual, OpLessEqual}

// Breached reports whether value satisfies the operator against threshold.
func (o Operator) Breached(value, threshold int64) bool {
	switch o {
	case OpGreater:
		return value > threshold
	case OpLess:
		return value < threshold
	case OpGreaterEqual:
		return value >= threshold
	case OpLessEqual:
		return value <= threshold
	}
	return false
}

// Window is the evaluation window of a rule.
type Window string

const (
	Window5m  Window = "5m"
	Window10m Window = "10m"
	Window60m Window = "60m"
)

// Windows lists every window.
var Windows = []Window{Window5m, Window10m, Window60m}

// Duration returns the length of the window.
func (w Window) Duration() time.Duration {
	switch w {
	case Window5m:
		return 5 * time.Minute
	case Window10m:
		return 10 * time.Minute
	case Window60m:
		return 60 * time.Minute
	}
	return 0
}

// State is the evaluated state of a rule.
type State string

const (
	StateOK      State = "ok"
	StateAlert   State = "alert"
	StateNoData  State = "no_data"
	StateUnknown State = "unknown"
)

// States lists every state.
var States = []State{StateOK, StateAlert, StateNoData, StateUnknown}

// AlertRule is a rule on one metric of one project or of a whole account.
type AlertRule struct {
	ID              string
	AccountID       string
	Name            string
	ProjectID       *string // nil: account-wide
	Metric          Metric
	Operator        Operator
	Threshold       int64
	Window          Window
	Enabled         bool
	State           State
	CreatedAt       time.Time
	UpdatedAt       time.Time
	Since           *time.Time
	LastEvaluatedAt *time.Time
	CurrentValue    *int64
	// Sequence is the number of the rule's last alert event (0: none yet).
	// Each transition's event carries the next one, written with the state
	// change under the version condition, so a receiver can put a rule's
	// events back in order whatever order they arrive in.
	Sequence int64
	// SilencedFrom is the state receivers were last told of (by the
	// event of its transition) when a silence held back the event of a
	// later transition into or out of alert; "" when they were told of
	// the current one. An evaluation outside any silence sends the event
	// held back and clears it (AlertRule.Evaluated).
	SilencedFrom State
	// Version increases on every write; updates are conditional on it so that
	// concurrent writers (PATCH, the evaluator) never overwrite each other.
	Version int64
	// Change is set on a rule to be written whose state changed (by
	// Evaluated and RulePatch.Apply): the store writes it as the history
	// entry in the same atomic write, with the rule's new Version. It is
	// not part of the stored rule: a read returns it nil. The tag tells
	// whole-record checks (storetest) that stores never round-trip it.
	Change *StateChange `store:"-"`
	// Wake is set on a rule to be written that the evaluator should
	// evaluate soon, not at its next scheduled run (the API sets it on an
	// enabled rule it creates or changes): the store wakes the rule's
	// scope in the same atomic write (see RuleStore on wake-ups). Like Change,
	// it is not part of the stored rule: a read returns it false.
	Wake bool `store:"-"`
}

// Announced returns the state the receivers were last told of, as far as
// alert goes: the rule's state, or the one a silence left them with.
func (r AlertRule) Announced() State {
	if r.SilencedFrom != "" {
		return r.SilencedFrom
	}
	return r.State
}

// RulePatch holds the fields a PATCH sent; nil means "not sent".
type RulePatch struct {
	Name      *string
	ProjectID **string // set to a nil *string to make the rule account-wide
	Metric    *Metric
	Operator  *Operator
	Threshold *int64
	Window    *Window
	Enabled   *bool
}

// Apply returns the rule with the patch applied, and whether anything changed.
// Disabling a rule sets its state to unknown (docs/decisions.md); enabling it again
// keeps unknown until the next evaluation.
func (p RulePatch) Apply(r AlertRule, now time.Time) (AlertRule, bool) {
	out := r
	out.Change, out.Wake = nil, false
	changed := p.set(&out)
	if !changed {
		return r, false
	}
	if r.Enabled && !out.Enabled && out.State != StateUnknown {
		out.State = StateUnknown
		t := now
		out.Since = &t
		out.Change = change(r, out, now, "")
	}
	out.UpdatedAt = now
	return out, true
}

// set copies each field the patch sent onto *r, and reports whether any
// of them changed its value. One line a field, without reflection: it runs
// on every create and PATCH. A field of RulePatch left out here fails the
// tests, which send each field alone (TestApplyTakesEveryPatchField,
// TestCreateTakesEveryPatchField).
func (p RulePatch) set(r *AlertRule) bool {
	changed := setSent(&r.Name, p.Name)
	changed = setSentPtr(&r.ProjectID, p.ProjectID) || changed
	changed = setSent(&r.Metric, p.Metric) || changed
	changed = setSent(&r.Operator, p.Operator) || changed
	changed = setSent(&r.Threshold, p.Threshold) || changed
	changed = setSent(&r.Window, p.Window) || changed
	changed = setSent(&r.Enabled, p.Enabled) || changed
	return changed
}

// setSent sets *dst to the value sent, if any, and reports whether that
// changed it.
func setSent[T comparable](dst, sent *T) bool {
	if sent == nil || *dst == *sent {
		return false
	}
	*dst = *sent
	return true
}

// setSentPtr is setSent for an optional field: two pointers to equal
// values (or two nils) are the same value.
func setSentPtr[T comparable](dst **T, sent **T) bool {
	if sent == nil || equalPtr(*dst, *sent) {
		return false
	}
	*dst = *sent
	return true
}

// ProjectChanged reports whether the patch moves the rule to another project,
// which the store must then check exists.
func (p RulePatch) ProjectChanged(before AlertRule) bool {
	return p.ProjectID != nil && *p.ProjectID != nil && !equalPtr(*p.ProjectID, before.ProjectID)
}

func equalPtr[T comparable](a, b *T) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}

// NewRuleFrom returns a rule as it is on creation, from a create request
// read like a PATCH that sends the required fields (a create body): state
// ok since created_at, never evaluated, enabled unless it says otherwise.
// Every field the patch sends is the rule's field of the same name.
func NewRuleFrom(id, accountID string, p RulePatch, now time.Time) AlertRule {
	since := now
	r := AlertRule{
		ID: id, AccountID: accountID, Enabled: true,
		State: StateOK, CreatedAt: now, UpdatedAt: now, Since: &since, Version: 1,
	}
	p.set(&r)
	return r
}

// NewRule is NewRuleFrom for a create request written in Go (tests, demo
// data).
func NewRule(id, accountID string, in RuleInput, now time.Time) AlertRule {
	return NewRuleFrom(id, accountID, in.Patch(), now)
}

// RuleInput is a create request written in Go: the required fields as
// values, the optional ones as pointers (nil: the default). Each field is
// RulePatch's of the same name; a patch field it lacks is not sent.
type RuleInput struct {
	Name      string
	ProjectID *string
	Metric    Metric
	Operator  Operator
	Threshold int64
	Window    Window
	Enabled   *bool
}

// Patch returns the create body the input stands for: each of its fields
// sent (ProjectID even when nil: account-wide), Enabled only when set.
// TestRuleInputSendsEveryField fails on a field left out.
func (in RuleInput) Patch() RulePatch {
	return RulePatch{Name: &in.Name, ProjectID: &in.ProjectID, Metric: &in.Metric, Operator: &in.Operator,
		Threshold: &in.Threshold, Window: &in.Window, Enabled: in.Enabled}
}
