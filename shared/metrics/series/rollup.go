// Package series reads a metric as the rules see it, over ranges longer
// than a rule's window: the per-minute (or coarser) series of GET
// /v1/metrics and the replay of an unsaved rule (Preview). It also rolls
// the one-minute buckets up into hourly ones, so that a series reaches
// back MetricHourRetention while the minutes are kept
// MetricMinuteRetention (docs/api.md, our additions).
//
// It sits beside the bucket store rather than inside it: the store's item
// layout is its own (shared/store/dynamo/metricstore), and this package reads
// and writes through two small interfaces, buckets.Store for minutes and
// HourStore for roll-ups.
package series

import (
	"context"
	"fmt"
	"time"

	"github.com/voiceops/opsapi/shared/metrics"
	"github.com/voiceops/opsapi/shared/metrics/buckets"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// HourStore keeps the hourly roll-ups: one bucket per scope and hour
// (its Minute is the hour), for voiceops.MetricHourRetention.
// Implementations: shared/store/memory (Rollups) and shared/store/dynamo/metricstore
// (on the metrics table), held to one contract by storetest.RunRollups.
type HourStore interface {
	// PutHours stores each bucket as its scope's roll-up of the hour it
	// is dated, replacing a stored one: rolling an hour up twice stores
	// it once.
	PutHours(ctx context.Context, hours []buckets.Bucket) error
	// ReadHours returns the roll-ups of scope s whose hour is in
	// [from, to), ascending; hours never rolled up are absent.
	ReadHours(ctx context.Context, s metrics.Scope, from, to time.Time) ([]buckets.Bucket, error)
}

// FinalAfter is how long after its end an hour can still change: the
// intake accepts events metrics.Retention old (and MaxFuture ahead), and
// the minute a late writer is in may still be landing. An hour is rolled
// up once, after that.
const FinalAfter = metrics.Retention + metrics.MaxFuture + time.Minute

// catchUp is how far back a roll-up run looks for final hours that have
// none: a run that failed or never happened for a day is made good by the
// next, as long as the minutes are still kept.
const catchUp = 24 * time.Hour

// LastFinalHour returns the end of the last hour that is final at now:
// hours starting before it are rolled up.
func LastFinalHour(now time.Time) time.Time {
	return now.Add(-FinalAfter).UTC().Truncate(time.Hour)
}

// Roller rolls the minutes of final hours up into hourly buckets. The
// evaluator's schedule runs it once a minute for each rule shard (the
// accounts of that shard); a run reads the scope's roll-ups of the last
// day (one Query) and, for a final hour without one, that hour's minutes,
// then writes the missing hours together. An hour with no data gets an
// empty roll-up, so it is not read again.
type Roller struct {
	Minutes buckets.Store
	Hours   HourStore
	// Scopes lists the metric scopes of a rule shard (AccountScopes).
	Scopes func(ctx context.Context, shard int) ([]metrics.Scope, error)
	Now    func() time.Time
	// Due tells whether a run at now rolls anything up; nil: every run.
	// Deployed and in the dev server it is RollWindow: the scheduled runs
	// of a few minutes after each hour becomes final, so that a scope's
	// roll-ups are read a few times an hour, not every minute.
	Due func(now time.Time) bool
}

// Roll-ups are made in the minutes [rollMinute, rollMinute+rollTries) of
// each hour: an hour is final FinalAfter (2 h 2 min) after its end, so
// from minute 3 the hour that ended two hours before is; ten tries outlast
// a few failed runs, and the next hour's runs catch up on what they miss.
const (
	rollMinute = int(FinalAfter%time.Hour/time.Minute) + 1
	rollTries  = 10
)

// RollWindow reports whether now is in the minutes of the hour when the
// roll-ups are made.
func RollWindow(now time.Time) bool {
	m := now.UTC().Minute()
	return m >= rollMinute && m < rollMinute+rollTries
}

// RollStats tells what a run did.
type RollStats struct {
	Scopes int // scopes looked at
	Rolled int // hours rolled up (written)
}

// RollShard rolls up the final hours of every scope of a shard.
func (r *Roller) RollShard(ctx context.Context, shard int) (RollStats, error) {
	var st RollStats
	if r.Due != nil && !r.Due(r.Now()) {
		return st, nil
	}
	scopes, err := r.Scopes(ctx, shard)
	if err != nil {
		return st, fmt.Errorf("series: listing the scopes of shard %d: %w", shard, err)
	}
	end := LastFinalHour(r.Now())
	for _, s := range scopes {
		n, err := r.RollScope(ctx, s, end)
		st.Scopes++
		st.Rolled += n
		if err != nil {
			return st, err
		}
	}
	return st, nil
}

// RollScope rolls up the hours of scope s in [end-catchUp, end) that have
// no roll-up yet (never before the minutes' retention), and returns how
// many it wrote.
func (r *Roller) RollScope(ctx context.Context, s metrics.Scope, end time.Time) (int, error) {
	start := end.Add(-catchUp)
	if kept := r.Now().Add(-voiceops.MetricMinuteRetention).UTC().Truncate(time.Hour).Add(time.Hour); start.Before(kept) {
		start = kept
	}
	if !start.Before(end) {
		return 0, nil
	}
	have, err := r.Hours.ReadHours(ctx, s, start, end)
	if err != nil {
		return 0, fmt.Errorf("series: reading the roll-ups of %v: %w", s, err)
	}
	done := map[int64]bool{}
	for _, h := range have {
		done[h.Minute.Unix()] = true
	}
	var missing []buckets.Bucket
	for h := start; h.Before(end); h = h.Add(time.Hour) {
		if done[h.Unix()] {
			continue
		}
		minutes, err := r.Minutes.ReadBuckets(ctx, s, h, h.Add(time.Hour))
		if err != nil {
			return 0, fmt.Errorf("series: reading the minutes of %v at %v: %w", s, h, err)
		}
		missing = append(missing, merge(s, h, minutes))
	}
	if len(missing) == 0 {
		return 0, nil
	}
	if err := r.Hours.PutHours(ctx, missing); err != nil {
		return 0, fmt.Errorf("series: writing the roll-ups of %v: %w", s, err)
	}
	return len(missing), nil
}

// merge returns the buckets as one bucket of scope s dated at.
func merge(s metrics.Scope, at time.Time, bs []buckets.Bucket) buckets.Bucket {
	sum := buckets.Summarize(bs, at, at.Add(100*365*24*time.Hour))
	b := buckets.Bucket{Scope: s, Minute: at.UTC(), Counts: sum.Counts}
	if sum.Latency != nil && !sum.Latency.IsEmpty() {
		b.Latency = sum.Latency
	}
	return b
}

// Accounts is what AccountScopes reads.
type Accounts interface {
	ListAccounts(ctx context.Context) ([]voiceops.Account, error)
	ListProjects(ctx context.Context, accountID string) ([]voiceops.Project, error)
}

// AccountScopes lists the scopes of the accounts of a rule shard (every
// account for a negative shard): each account's own and its projects'.
func AccountScopes(a Accounts) func(ctx context.Context, shard int) ([]metrics.Scope, error) {
	return func(ctx context.Context, shard int) ([]metrics.Scope, error) {
		accounts, err := a.ListAccounts(ctx)
		if err != nil {
			return nil, err
		}
		var out []metrics.Scope
		for _, acct := range accounts {
			if shard >= 0 && voiceops.RuleShardOf(acct.ID) != shard {
				continue
			}
			out = append(out, metrics.Scope{AccountID: acct.ID})
			ps, err := a.ListProjects(ctx, acct.ID)
			if err != nil {
				return nil, err
			}
			for _, p := range ps {
				out = append(out, metrics.Scope{AccountID: acct.ID, ProjectID: p.ID})
			}
		}
		return out, nil
	}
}
