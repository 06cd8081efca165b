// Package metrics records the metrics that alert rules watch and summarises
// them over evaluation windows (docs/alerting.md and docs/api.md, "Metric intake"). It imports nothing from AWS or HTTP.
//
// Events are aggregated into one-minute buckets per scope: every event
// counts in its account's scope and, when it has a project, in that
// project's scope too, so an account-wide rule sees every project. A bucket
// holds exact counts and, for turn latencies, a mergeable DDSketch with 1%
// relative accuracy. Buckets are kept for Retention (about 2 hours), longer
// than the longest evaluation window.
package metrics

import (
	"cmp"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/voiceops/opsapi/shared/voiceops"
)

// Kind is what an event reports: the "metric" of the intake. The kinds are
// defined in one table in voiceops (metric.go), with what their values are
// and the rule metrics that read them; the validation here follows it.
// The names below are the table's, for the producers of these kinds.
type Kind = voiceops.MetricKind

const (
	TurnLatency    = voiceops.KindTurnLatency
	APIErrors      = voiceops.KindAPIErrors
	FunctionErrors = voiceops.KindFunctionErrors
	CallCrashes    = voiceops.KindCallCrashes
	CallVolume     = voiceops.KindCallVolume
	Activity       = voiceops.KindActivity
)

// Kinds lists every kind in documentation order.
var Kinds = voiceops.MetricKinds

// Limits of the metric intake and of the stores.
const (
	// Retention is how long buckets are kept (from the start of their
	// minute), and how old an event may be. An event dated near that edge
	// is accepted but its bucket expires soon after: no window (60 minutes
	// at most) reads that far back.
	Retention = voiceops.MetricRetention
	// MaxFuture is how far ahead of the receiver's clock an event may be
	// dated (producers' clocks drift a little).
	MaxFuture = time.Minute
	// MaxBatch is the most events one intake request may carry.
	MaxBatch = 1000
	// MaxLatencyMS bounds a turn latency: one day, far beyond any real turn.
	MaxLatencyMS = 86_400_000
	// MaxCount bounds the value of one count event.
	MaxCount = 1<<31 - 1
	// RelativeAccuracy is the relative error of the latency percentiles.
	RelativeAccuracy = 0.01
)

// Event is one metric event.
type Event struct {
	AccountID string
	ProjectID string // "" = no project: it counts for the account only
	Kind      Kind
	// Value is the latency in milliseconds (a latency kind) or the count
	// (a count kind), taken as is: 0 counts nothing but is still activity.
	// It is ignored for Activity.
	Value float64
	At    time.Time
}

// Count returns an event counting one of kind k, such as one API error.
func Count(k Kind, accountID, projectID string, at time.Time) Event {
	return Event{AccountID: accountID, ProjectID: projectID, Kind: k, Value: 1, At: at}
}

// Problems returns what keeps e from being recorded when it is received at
// now: at most one problem per field, named like the fields of the intake's
// JSON and in their order (account_id, project_id, metric, value, at). The
// rules: tenant-shaped account (and project) IDs, a known kind, a value in
// range for the kind, and a time at most Retention old and MaxFuture ahead.
func (e Event) Problems(now time.Time) []voiceops.FieldError {
	return e.problems(now, true)
}

// Check reports whether e can be recorded: Problems' rules, except the age
// of its time (it must only have one). Recorder.Record checks every event
// with it.
func (e Event) Check() error {
	if ps := e.problems(time.Time{}, false); len(ps) > 0 {
		return fmt.Errorf("%s %s", ps[0].Field, ps[0].Message)
	}
	return nil
}

func (e Event) problems(now time.Time, checkAge bool) []voiceops.FieldError {
	var ps []voiceops.FieldError
	fail := func(field, msg string) { ps = append(ps, voiceops.FieldError{Field: field, Message: msg}) }
	if !voiceops.ValidTenantID(e.AccountID) {
		fail("account_id", "must be an account ID: 1 to 64 letters, digits, _ or -")
	}
	if e.ProjectID != "" && !voiceops.ValidTenantID(e.ProjectID) {
		fail("project_id", "must be null or a project ID: 1 to 64 letters, digits, _ or -")
	}
	switch v := e.Kind.Value(); {
	case v == 0:
		fail("metric", voiceops.OneOf(Kinds))
	case v == voiceops.ValueLatency && !(e.Value >= 0 && e.Value <= MaxLatencyMS):
		fail("value", fmt.Sprintf("must be a number of milliseconds from 0 to %d", MaxLatencyMS))
	case v == voiceops.ValueCount && !(e.Value >= 0 && e.Value <= MaxCount && e.Value == math.Trunc(e.Value)):
		fail("value", fmt.Sprintf("must be an integer count from 0 to %d", MaxCount))
	}
	switch {
	case e.At.IsZero():
		fail("at", "is required")
	case checkAge && e.At.Before(now.Add(-Retention)):
		fail("at", "must be within the last 2 hours")
	case checkAge && e.At.After(now.Add(MaxFuture)):
		fail("at", "must not be more than 1 minute in the future")
	}
	return ps
}

// Scope is what a rule watches: one project of an account, or the whole
// account (ProjectID "").
type Scope struct {
	AccountID string
	ProjectID string
}

func (s Scope) String() string {
	if s.ProjectID == "" {
		return s.AccountID
	}
	return s.AccountID + "/" + s.ProjectID
}

// CompareScopes orders scopes: by account, the account-wide scope first.
func CompareScopes(a, b Scope) int {
	return cmp.Or(strings.Compare(a.AccountID, b.AccountID), strings.Compare(a.ProjectID, b.ProjectID))
}

// Scopes returns the scopes e counts in: its account, and its project when
// it has one.
func (e Event) Scopes() []Scope {
	if e.ProjectID == "" {
		return []Scope{{AccountID: e.AccountID}}
	}
	return []Scope{{AccountID: e.AccountID}, {AccountID: e.AccountID, ProjectID: e.ProjectID}}
}

// Minute returns the bucket minute of t: t truncated to the minute, in UTC.
func Minute(t time.Time) time.Time { return t.UTC().Truncate(time.Minute) }
