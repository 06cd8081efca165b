package series

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/voiceops/opsapi/shared/metrics"
	"github.com/voiceops/opsapi/shared/metrics/buckets"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// Steps are the steps a series may have, finest first.
var Steps = []time.Duration{time.Minute, 5 * time.Minute, 15 * time.Minute, time.Hour, 6 * time.Hour, 24 * time.Hour}

// MaxPoints bounds the points of one series (a day of minutes).
const MaxPoints = 1440

// Point is a metric's value over one step: nil when the scope reported
// nothing then (no_data), as a rule would have seen it.
type Point struct {
	At    time.Time
	Value *int64
}

// Query is one series: metric m of scope s over [From, To) in steps of
// Step. From and To are whole steps (Align).
type Query struct {
	Scope    metrics.Scope
	Metric   voiceops.Metric
	From, To time.Time
	Step     time.Duration
}

// Reader reads series from the minutes and the hourly roll-ups.
type Reader struct {
	Minutes buckets.Store
	Hours   HourStore
	Now     func() time.Time
}

// Align returns [from, to) widened to whole steps (UTC).
func Align(from, to time.Time, step time.Duration) (time.Time, time.Time) {
	f := from.UTC().Truncate(step)
	t := to.UTC().Truncate(step)
	if t.Before(to) {
		t = t.Add(step)
	}
	return f, t
}

// MinutesFrom is the oldest minute the store still keeps whole at now.
func MinutesFrom(now time.Time) time.Time {
	return now.Add(-voiceops.MetricMinuteRetention).UTC().Truncate(time.Minute).Add(time.Minute)
}

// HoursFrom is the oldest hour whose roll-up is still kept at now.
func HoursFrom(now time.Time) time.Time {
	return now.Add(-voiceops.MetricHourRetention).UTC().Truncate(time.Hour).Add(time.Hour)
}

// Read returns the series, one point per step, dense. A step shorter than
// an hour reads minutes, so its range must lie within the minutes'
// retention; a step of an hour or more reads the roll-ups of the final
// hours (minutes where a roll-up is missing but the minutes are kept) and
// the minutes of the hours after them.
func (r *Reader) Read(ctx context.Context, q Query) ([]Point, error) {
	var bs []buckets.Bucket
	if q.Step < time.Hour {
		m, err := r.Minutes.ReadBuckets(ctx, q.Scope, q.From, q.To)
		if err != nil {
			return nil, err
		}
		bs = m
	} else {
		var err error
		if bs, err = r.hourly(ctx, q.Scope, q.From, q.To); err != nil {
			return nil, err
		}
	}
	out := make([]Point, 0, int(q.To.Sub(q.From)/q.Step))
	i := 0
	for at := q.From; at.Before(q.To); at = at.Add(q.Step) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		end := at.Add(q.Step)
		j := i
		for j < len(bs) && bs[j].Minute.Before(end) {
			j++
		}
		p := Point{At: at}
		if v, ok := buckets.Summarize(bs[i:j], at, end).Value(q.Metric); ok {
			p.Value = &v
		}
		out = append(out, p)
		i = j
	}
	return out, nil
}

// hourly returns one bucket per hour of [from, to) that has data: the
// roll-up of a final hour, else the hour's minutes merged.
func (r *Reader) hourly(ctx context.Context, s metrics.Scope, from, to time.Time) ([]buckets.Bucket, error) {
	now := r.Now()
	final := LastFinalHour(now)
	var out []buckets.Bucket
	rolled := map[int64]bool{}
	if from.Before(final) {
		hs, err := r.Hours.ReadHours(ctx, s, from, minTime(final, to))
		if err != nil {
			return nil, err
		}
		for _, h := range hs {
			rolled[h.Minute.Unix()] = true
		}
		out = append(out, hs...)
	}
	// Hours without a roll-up: those not final yet, and final ones the
	// roller has not reached, read from minutes while they are kept.
	kept := MinutesFrom(now)
	var gapFrom time.Time
	flush := func(end time.Time) error {
		if gapFrom.IsZero() {
			return nil
		}
		ms, err := r.Minutes.ReadBuckets(ctx, s, gapFrom, end)
		if err != nil {
			return err
		}
		out = appendHours(out, s, ms)
		gapFrom = time.Time{}
		return nil
	}
	for h := from; h.Before(to); h = h.Add(time.Hour) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if rolled[h.Unix()] || h.Before(kept.Truncate(time.Hour)) {
			if err := flush(h); err != nil {
				return nil, err
			}
			continue
		}
		if gapFrom.IsZero() {
			gapFrom = h
		}
	}
	if err := flush(to); err != nil {
		return nil, err
	}
	slices.SortFunc(out, byMinute)
	return out, nil
}

// appendHours appends minutes ms of scope s (ascending, as the store
// returns them) merged by hour: one pass over them, so the read stays
// linear in the minutes however many hours the range spans.
func appendHours(out []buckets.Bucket, s metrics.Scope, ms []buckets.Bucket) []buckets.Bucket {
	for i := 0; i < len(ms); {
		h := ms[i].Minute.UTC().Truncate(time.Hour)
		j := i + 1
		for j < len(ms) && ms[j].Minute.Before(h.Add(time.Hour)) {
			j++
		}
		out = append(out, merge(s, h, ms[i:j]))
		i = j
	}
	return out
}

func byMinute(a, b buckets.Bucket) int { return a.Minute.Compare(b.Minute) }

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// CheckRange reports what is wrong with a series range at now, "" when
// nothing: the field it concerns and the message. to may end at most one
// step after now (the step holding now, aligned up): later steps hold no
// data, and a range years ahead would only cost the reader time.
func CheckRange(from, to time.Time, step time.Duration, now time.Time) (field, msg string) {
	_, latest := Align(now, now.Add(step), step)
	switch {
	case !from.Before(to):
		return "from", "must be before to"
	case to.After(latest):
		return "to", "must be at most one step after now"
	case from.Before(HoursFrom(now)):
		return "from", fmt.Sprintf("must be at most %d days ago", int(voiceops.MetricHourRetention/(24*time.Hour)))
	case step < time.Hour && from.Before(MinutesFrom(now)):
		return "step", fmt.Sprintf("must be 1h or more for a range starting more than %d hours ago", int(voiceops.MetricMinuteRetention/time.Hour))
	case int(to.Sub(from)/step) > MaxPoints:
		return "step", fmt.Sprintf("too small for the range: at most %d points", MaxPoints)
	}
	return "", ""
}

// DefaultStep is the finest step that answers [from, to) at now.
func DefaultStep(from, to, now time.Time) time.Duration {
	for _, s := range Steps {
		f, t := Align(from, to, s)
		if field, _ := CheckRange(f, t, s, now); field == "" {
			return s
		}
	}
	return Steps[len(Steps)-1]
}
