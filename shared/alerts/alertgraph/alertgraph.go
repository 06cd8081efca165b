// Package alertgraph composes the graph behind the alert rules and webhook
// endpoints: the alerting service, and the rules as the reads show them,
// with the evaluator's marks (last_evaluated_at). The alerts and webhooks
// functions, the dev server and the HTTP tests all build it with New, so
// that the tests run the marks as deployed. A changed rule's wake-up of
// the evaluator is the rule store's (voiceops.RuleStore, wake-ups), set
// up where the store is built. It takes stores and functions and builds
// no AWS client.
package alertgraph

import (
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
	Now    func() time.Time
	Log    *slog.Logger
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
	return Graph{Service: svc, Rules: alerting.WithMarks(d.Rules, d.Marks)}
}
