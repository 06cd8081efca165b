// Package evalgraph composes the rule evaluator's graph: the evaluator over
// the rules, their events and marks and the metric buckets, fanning its
// events out to the deliveries, and the hourly roll-ups it writes after a
// scheduled run. The evaluator function, the dev server and the HTTP tests
// all build it with New. It takes stores and builds no AWS client.
package evalgraph

import (
	"context"
	"log/slog"
	"time"

	"github.com/voiceops/opsapi/shared/alerts/evaluator"
	"github.com/voiceops/opsapi/shared/metrics/buckets"
	"github.com/voiceops/opsapi/shared/metrics/series"
	"github.com/voiceops/opsapi/shared/platform/telemetry"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// Deps is what the evaluator runs on.
type Deps struct {
	// Stores gives the rules, their events and marks (Evaluations), and
	// the accounts whose scopes the roll-ups walk.
	Stores  voiceops.Stores
	Metrics buckets.Store
	// Rollups keeps the metric series' hourly roll-ups, written after each
	// scheduled evaluation of a shard; nil writes none.
	Rollups series.HourStore
	// Fanout hands the evaluations' events to the deliveries
	// (delivery.Outbox.Fanout).
	Fanout func(ctx context.Context, e voiceops.AlertEvent) error
	// Telemetry receives the evaluation metrics; nil none.
	Telemetry telemetry.Recorder
	Now       func() time.Time
	Log       *slog.Logger
}

// New returns the evaluator of d.
func New(d Deps) *evaluator.Evaluator {
	e := &evaluator.Evaluator{
		Rules: d.Stores.Rules, Events: d.Stores.Events, Metrics: d.Metrics, Marks: d.Stores.Evaluations, Silences: d.Stores.Silences,
		Fanout: d.Fanout, Now: d.Now, Log: d.Log, Telemetry: d.Telemetry,
	}
	if d.Rollups != nil {
		roller := &series.Roller{Minutes: d.Metrics, Hours: d.Rollups, Scopes: series.AccountScopes(d.Stores.Accounts), Now: d.Now, Due: series.RollWindow}
		e.Rollup = func(ctx context.Context, shard int) error { _, err := roller.RollShard(ctx, shard); return err }
	}
	return e
}
