package voiceops

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Limits of silences (docs/alerting.md, "Silences").
const (
	// MaxActiveSilences bounds an account's silences that have not ended
	// (in effect or starting later).
	MaxActiveSilences = 100
	// MaxSilenceDuration bounds a silence from its start, and how far
	// ahead of now it may end.
	MaxSilenceDuration = 90 * 24 * time.Hour
	// SilenceRetention is how long an ended silence is kept (and listed).
	SilenceRetention = 30 * 24 * time.Hour
	// MaxSilenceComment bounds a silence's comment, in characters.
	MaxSilenceComment = 1024
)

// PrefixSilence starts every silence ID.
const PrefixSilence = "sil_"

// MatcherName is what a silence's matcher compares: a field of the rule.
type MatcherName string

const (
	MatchRuleID    MatcherName = "rule_id"
	MatchProjectID MatcherName = "project_id"
	MatchMetric    MatcherName = "metric"
)

// MatcherNames lists every matcher name.
var MatcherNames = []MatcherName{MatchRuleID, MatchProjectID, MatchMetric}

// SilenceMatcher selects the rules whose field Name equals Value. Value is
// nil only for project_id, where it selects the account-wide rules.
type SilenceMatcher struct {
	Name  MatcherName
	Value *string
}

// Silence holds back the deliveries of the rules it covers from StartsAt
// until EndsAt (excluded): a rule is covered when every matcher matches it
// (no matcher: every rule of the account). Evaluation goes on; the
// history marks the changes made under it (StateChange.Silenced).
type Silence struct {
	ID        string
	AccountID string
	Matchers  []SilenceMatcher
	StartsAt  time.Time
	EndsAt    time.Time
	Comment   string
	CreatedAt time.Time
}

// Ended reports whether the silence has ended at `at`.
func (s Silence) Ended(at time.Time) bool { return !at.Before(s.EndsAt) }

// Covers reports whether the silence is in effect at `at` and selects r.
func (s Silence) Covers(r AlertRule, at time.Time) bool {
	return !at.Before(s.StartsAt) && !s.Ended(at) && s.Selects(r)
}

// Selects reports whether r is a rule of the silence's account that every
// matcher matches, whenever the silence is in effect.
func (s Silence) Selects(r AlertRule) bool {
	if r.AccountID != s.AccountID {
		return false
	}
	for _, m := range s.Matchers {
		var got *string
		switch m.Name {
		case MatchRuleID:
			got = &r.ID
		case MatchProjectID:
			got = r.ProjectID
		case MatchMetric:
			v := string(r.Metric)
			got = &v
		default:
			return false
		}
		if !equalPtr(got, m.Value) {
			return false
		}
	}
	return true
}

// WakeScopes returns the scopes an end of the silence wakes: the project
// of each enabled rule of rules it selects ("" for the account-wide ones),
// each once, in the order of rules. Every selected rule's scope is woken,
// not only those it holds an event back for now: an evaluation that read
// the silences before the end may still write one.
func (s Silence) WakeScopes(rules []AlertRule) []string {
	var out []string
	for _, r := range rules {
		project := ""
		if r.ProjectID != nil {
			project = *r.ProjectID
		}
		if r.Enabled && s.Selects(r) && !slices.Contains(out, project) {
			out = append(out, project)
		}
	}
	return out
}

// Silenced reports whether any of the silences covers r at `at`.
func Silenced(silences []Silence, r AlertRule, at time.Time) bool {
	return slices.ContainsFunc(silences, func(s Silence) bool { return s.Covers(r, at) })
}

// CheckSilenceTimes returns the field errors of a silence's times created
// at now: it must end after it starts, after now, at most
// MaxSilenceDuration after its start and after now.
func CheckSilenceTimes(startsAt, endsAt, now time.Time) []FieldError {
	days := int(MaxSilenceDuration / (24 * time.Hour))
	switch {
	case !endsAt.After(startsAt):
		return []FieldError{{Field: "ends_at", Message: "must be after starts_at"}}
	case !endsAt.After(now):
		return []FieldError{{Field: "ends_at", Message: "must be in the future"}}
	case endsAt.Sub(startsAt) > MaxSilenceDuration:
		return []FieldError{{Field: "ends_at", Message: fmt.Sprintf("must be at most %d days after starts_at", days)}}
	case endsAt.Sub(now) > MaxSilenceDuration:
		return []FieldError{{Field: "ends_at", Message: fmt.Sprintf("must be at most %d days from now", days)}}
	}
	return nil
}

// ErrSilenceLimit is the error of a silence created past MaxActiveSilences.
var ErrSilenceLimit = &Error{Kind: KindConflict, Message: fmt.Sprintf("the account already has the maximum of %d silences that have not ended", MaxActiveSilences)}

// SilenceStore holds silences. Each method reads the account's partition
// only; times are passed in, so the stores hold no clock of their own
// for them.
type SilenceStore interface {
	// CreateSilence stores s if the account has fewer than
	// MaxActiveSilences silences not ended at now (else ErrSilenceLimit),
	// atomically with respect to other creates. It keeps s until
	// SilenceRetention after it ends. check, when not nil, is the caller's
	// own validation of s that needs reads (its matchers' rule and
	// project): the store runs it once, alongside its own first read, and
	// writes nothing unless it returns nil, returning its error as is.
	CreateSilence(ctx context.Context, s Silence, now time.Time, check func() error) error
	// ListSilences returns the account's silences not ended at now or
	// ended less than SilenceRetention before it, by CreatedAt then ID.
	ListSilences(ctx context.Context, accountID string, now time.Time) ([]Silence, error)
	// ActiveSilences returns the account's silences not ended at `at`
	// (in effect or starting later), in one read whatever the number of
	// ended ones: the evaluator's one read per account and run.
	ActiveSilences(ctx context.Context, accountID string, at time.Time) ([]Silence, error)
	// EndSilence ends the silence at `at`: one in effect then ends at
	// `at` (and is kept as ended), one starting later is removed, one
	// already ended is left as it is. It returns the silence as it
	// stands after (zero when removed), or ErrNotFound. Ending one in
	// effect wakes, in the same atomic write, the scopes of the rules it
	// held back (WakeScopes of the account's rules, read alongside the
	// silence; see RuleStore on wake-ups): a rule it held an event back for
	// sends it within a poll of the stream, not at the next scheduled run.
	EndSilence(ctx context.Context, accountID, id string, at time.Time) (Silence, error)
}

// SortSilences orders silences by creation time, then ID: the order of the
// list.
func SortSilences(ss []Silence) {
	slices.SortFunc(ss, func(a, b Silence) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
}
