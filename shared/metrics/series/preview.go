package series

import (
	"context"
	"fmt"
	"time"

	"github.com/voiceops/opsapi/shared/metrics"
	"github.com/voiceops/opsapi/shared/metrics/buckets"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// MaxPreview bounds the range of a preview (a day of minutes).
const MaxPreview = 24 * time.Hour

// PreviewPoint is one minute of a preview: the rule's value (nil:
// no_data) and state after its evaluation at the end of that minute.
type PreviewPoint struct {
	At    time.Time
	Value *int64
	State voiceops.State
}

// Transition is a state change the preview's rule would have made, with
// the event it would have sent (Type "" when none).
type Transition struct {
	At       time.Time
	From, To voiceops.State
	Value    *int64
	Type     voiceops.EventType
}

// PreviewResult is a rule replayed over a range.
type PreviewResult struct {
	Points      []PreviewPoint
	Transitions []Transition
	// Buckets is how many minute buckets were read.
	Buckets int
}

// CheckPreview reports what is wrong with a preview range at now (the
// field and the message), "" when nothing: whole minutes, at most
// MaxPreview, ending by now, and every window it reads still kept.
func CheckPreview(from, to time.Time, w voiceops.Window, now time.Time) (field, msg string) {
	switch {
	case !from.Before(to):
		return "from", "must be before to"
	case to.Sub(from) > MaxPreview:
		return "to", fmt.Sprintf("must be at most %d hours after from", int(MaxPreview/time.Hour))
	case to.After(now.Add(time.Minute)):
		return "to", "must not be in the future"
	case from.Add(-w.Duration()).Before(MinutesFrom(now)):
		return "from", fmt.Sprintf("must leave the rule's window within the last %d hours", int(voiceops.MetricMinuteRetention/time.Hour))
	}
	return "", ""
}

// Preview replays rule r, as created at from (state ok), over the
// minutes of [from, to): at the end of each minute it is evaluated
// exactly as the evaluator would (the same window, summary and state
// rules: buckets.Window, buckets.Summarize, AlertRule.Evaluated), on the
// buckets stored up to that minute. Nothing is written or sent.
func (r *Reader) Preview(ctx context.Context, rule voiceops.AlertRule, from, to time.Time) (PreviewResult, error) {
	d := rule.Window.Duration()
	readFrom, _ := buckets.Window(from, d)
	bs, err := r.Minutes.ReadBuckets(ctx, ScopeOf(rule), readFrom, to)
	if err != nil {
		return PreviewResult{}, err
	}
	res := PreviewResult{Points: make([]PreviewPoint, 0, int(to.Sub(from)/time.Minute)), Transitions: []Transition{}, Buckets: len(bs)}
	cur := rule
	cur.CreatedAt, cur.UpdatedAt, cur.State, cur.Enabled = from, from, voiceops.StateOK, true
	lo := 0
	for m := from; m.Before(to); m = m.Add(time.Minute) {
		evalAt := m.Add(time.Minute - time.Millisecond)
		wFrom, wTo := buckets.Window(evalAt, d)
		// The past holds every bucket: the ones dated after this minute
		// (a fast producer's clock) are left out, as they did not exist yet.
		wTo = minTime(wTo, m.Add(time.Minute))
		for lo < len(bs) && bs[lo].Minute.Before(wFrom) {
			lo++
		}
		hi := lo
		for hi < len(bs) && bs[hi].Minute.Before(wTo) {
			hi++
		}
		v, ok := buckets.Summarize(bs[lo:hi], wFrom, wTo).Value(rule.Metric)
		next, ev := cur.Evaluated(voiceops.Outcome{Value: v, NoData: !ok}, evalAt)
		p := PreviewPoint{At: m, State: next.State}
		if ok {
			p.Value = &v
		}
		res.Points = append(res.Points, p)
		if c := next.Change; c != nil {
			t := Transition{At: c.At, From: c.From, To: c.To, Value: c.Value}
			if ev != nil {
				t.Type = ev.Type
			}
			res.Transitions = append(res.Transitions, t)
		}
		cur = next
	}
	return res, nil
}

// ScopeOf returns the scope a rule watches (evaluator.ScopeOf, which this
// package does not link: it would bring the evaluator's Lambda sources).
func ScopeOf(r voiceops.AlertRule) metrics.Scope {
	s := metrics.Scope{AccountID: r.AccountID}
	if r.ProjectID != nil {
		s.ProjectID = *r.ProjectID
	}
	return s
}
