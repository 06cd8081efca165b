// Package alertgraph composes the graph behind the alert rules and webhook
// endpoints: the alerting service, whose changes wake the evaluator for the
// changed rule's scope, and the rules as the reads show them, with the
// evaluator's marks (last_evaluated_at). The alerts and webhooks functions,
// the dev server and the HTTP tests all build it with New, so that the
// tests run the marks and the wake-up as deployed. It takes stores and
// functions and builds no AWS client.
package alertgraph

import (
	"context"
	"log/slog"
	"time"

	"github.com/voiceops/opsapi/shared/alerts/alerting"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// Deps is what the graph runs on.
type Deps struct {
	Rules     voiceops.RuleStore
	Endpoints voiceops.EndpointStore
	// Marks are the evaluator's marks, shown by the reads as the rules'
	// last_evaluated_at (alerting.WithMarks); nil shows the rules' own.
	Marks voiceops.EvaluationStore
	// Fanout hands a change's events to the deliveries; nil leaves them
	// to the evaluator's repair pass.
	Fanout alerting.Fanout
	// Touch writes a touch in the scope's metric data, with no counts:
	// whatever consumes the metric data (the metrics table's stream
	// deployed, the dev server's trigger, the HTTP tests' stream) then
	// evaluates the scope as if data had come (dynamo.MetricCounts.Touch,
	// memory.Metrics.Touch). nil wakes nothing: the schedule evaluates
	// the rule within the minute.
	Touch func(ctx context.Context, accountID, projectID string, at time.Time) error
	Now   func() time.Time
	Log   *slog.Logger
}

// Graph is the alerting service and the rules its reads show.
type Graph struct {
	Service *alerting.Service
	// Rules are the rules with the evaluator's marks: what GET and list read.
	Rules voiceops.RuleStore
}

// New returns the graph of d.
func New(d Deps) Graph {
	svc := &alerting.Service{Rules: d.Rules, Endpoints: d.Endpoints, Fanout: d.Fanout, Now: d.Now, Log: d.Log}
	if d.Touch != nil {
		svc.EvaluateSoon = func(ctx context.Context, accountID, projectID string) error {
			return d.Touch(ctx, accountID, projectID, d.Now())
		}
	}
	return Graph{Service: svc, Rules: alerting.WithMarks(d.Rules, d.Marks)}
}
