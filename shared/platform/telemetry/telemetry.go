// Package telemetry is the catalog of the service's own metrics and the
// Recorder the code that sees activity reports them to. Each metric is
// defined once here (name, unit, dimensions, meaning); the Lambda
// functions write them to CloudWatch in the Embedded Metric Format
// (telemetry/emf), the dev server exposes them in Prometheus text format
// (telemetry/prom), and infra's dashboard and alarms read the same names.
//
// Dimensions are few and of small, fixed sets of values (host, route
// pattern, outcome): never an account, project, rule or delivery ID, since
// every distinct combination is a billed CloudWatch metric.
package telemetry

// Namespace is the CloudWatch namespace of every metric.
const Namespace = "VoiceOps"

// Unit is a CloudWatch unit (the EMF specification's list).
type Unit string

// The units the catalog uses.
const (
	Count        Unit = "Count"
	Milliseconds Unit = "Milliseconds"
)

// The dimension names.
const (
	DimHost    = "Host"    // studio | base
	DimRoute   = "Route"   // the route pattern, "GET /v1/alert-rules/{rule_id}"; "unmatched"
	DimSource  = "Source"  // stream | schedule | data (what started an evaluation); repair | dispatch (PendingEventAge)
	DimOutcome = "Outcome" // delivery: delivered | retry | failed; dial: placed | failed
	DimReason  = "Reason"  // a dial's failure reason (failed, timeout)
	DimChannel = "Channel" // chat | voice
)

// The Source values of PendingEventAge: who saw the event.
const (
	SourceRepair   = "repair"   // the evaluator's scheduled repair run
	SourceDispatch = "dispatch" // the dispatcher, at an event's first attempt
)

// Metric is one metric of the catalog.
type Metric struct {
	Name string
	Unit Unit
	// Dims are the dimension names a record gives values for, in order.
	Dims []string
	// Sets are the dimension sets CloudWatch aggregates it by (each a
	// subset of Dims): one billed metric per set and combination of values.
	Sets [][]string
	Help string
}

// The metrics.
var (
	Requests = Metric{Name: "Requests", Unit: Count, Dims: []string{DimHost, DimRoute}, Sets: [][]string{{DimHost}, {DimHost, DimRoute}},
		Help: "requests answered, by host and by route"}
	Errors4xx = Metric{Name: "4xx", Unit: Count, Dims: []string{DimHost, DimRoute}, Sets: [][]string{{DimHost}, {DimHost, DimRoute}},
		Help: "requests answered with a 4xx status"}
	Errors5xx = Metric{Name: "5xx", Unit: Count, Dims: []string{DimHost, DimRoute}, Sets: [][]string{{DimHost}, {DimHost, DimRoute}},
		Help: "requests answered with a 5xx status"}
	Throttled = Metric{Name: "429", Unit: Count, Dims: []string{DimHost, DimRoute}, Sets: [][]string{{DimHost}},
		Help: "requests answered 429 (rate limit of the key)"}
	Latency = Metric{Name: "Latency", Unit: Milliseconds, Dims: []string{DimHost, DimRoute}, Sets: [][]string{{DimHost}, {DimHost, DimRoute}},
		Help: "time from the request reaching the function to its answer"}
	IdempotentReplays = Metric{Name: "IdempotencyReplays", Unit: Count, Dims: []string{DimHost}, Sets: [][]string{{DimHost}},
		Help: "create requests answered from the Idempotency-Key's stored response"}
	IdempotencyConflicts = Metric{Name: "IdempotencyConflicts", Unit: Count, Dims: []string{DimHost}, Sets: [][]string{{DimHost}},
		Help: "Idempotency-Key reuse with another request (422) or while in flight (409)"}

	ScopesEvaluated = Metric{Name: "ScopesEvaluated", Unit: Count, Dims: []string{DimSource}, Sets: [][]string{{DimSource}},
		Help: "account or project scopes whose rules were evaluated"}
	RulesEvaluated = Metric{Name: "RulesEvaluated", Unit: Count, Dims: []string{DimSource}, Sets: [][]string{{DimSource}},
		Help: "enabled rules evaluated"}
	Transitions = Metric{Name: "Transitions", Unit: Count, Dims: []string{DimSource}, Sets: [][]string{{DimSource}},
		Help: "rule state changes that wrote an alert event"}
	EvaluationLag = Metric{Name: "EvaluationLag", Unit: Milliseconds, Dims: []string{DimSource}, Sets: [][]string{{DimSource}},
		Help: "time from the oldest stored metric event (stream) or the schedule's tick to its evaluation"}

	// PendingEventAge is how old the oldest alert event still to reach
	// its receivers is: the evaluator's repair run (Source "repair")
	// records the oldest event it found pending and could not fan out
	// either (0 when none is left), the dispatcher (Source "dispatch")
	// each event at its first attempt.
	// Healthy, an event is fanned out as it is written and sent within
	// seconds: an age in minutes is an alert stuck on its way.
	PendingEventAge = Metric{Name: "PendingEventAge", Unit: Milliseconds, Dims: []string{DimSource}, Sets: [][]string{{DimSource}},
		Help: "age of the oldest alert event the repair left pending (repair), or of an event at its first delivery attempt (dispatch)"}
	// ScheduledRunDuration is the evaluator's one-minute run alone (its
	// repair and shard fan-out), which the function's Duration mixes with
	// its stream and shard invocations.
	ScheduledRunDuration = Metric{Name: "ScheduledRunDuration", Unit: Milliseconds, Dims: nil, Sets: [][]string{{}},
		Help: "duration of the evaluator's scheduled run (repair and shard fan-out)"}

	DeliveryAttempts = Metric{Name: "DeliveryAttempts", Unit: Count, Dims: []string{DimOutcome}, Sets: [][]string{{}, {DimOutcome}},
		Help: "webhook POSTs made, by outcome (delivered, retry, failed)"}
	DeliveryLatency = Metric{Name: "DeliveryLatency", Unit: Milliseconds, Dims: []string{DimOutcome}, Sets: [][]string{{}},
		Help: "duration of a webhook POST"}
	RetriesScheduled = Metric{Name: "DeliveryRetriesScheduled", Unit: Count, Dims: nil, Sets: [][]string{{}},
		Help: "delivery attempts queued for later after a retryable outcome"}

	Dials = Metric{Name: "Dials", Unit: Count, Dims: []string{DimOutcome, DimReason}, Sets: [][]string{{DimOutcome}, {DimOutcome, DimReason}},
		Help: "outbound calls by outcome: placed or failed (the dialer), ended (the provider's report; reason completed, busy, no-answer, failed, canceled)"}
	IdleEnds = Metric{Name: "IdleEnds", Unit: Count, Dims: nil, Sets: [][]string{{}},
		Help: "conversations ended by the idle sweep"}
)

// MaxDims is the most dimensions a metric may have.
const MaxDims = 4

// Catalog lists every metric. It is a function, not a variable, so that a
// function's binary that never lists the metrics links no list (and runs
// no initialization for it: the metrics above are static data).
func Catalog() []Metric {
	return []Metric{
		Requests, Errors4xx, Errors5xx, Throttled, Latency, IdempotentReplays, IdempotencyConflicts,
		ScopesEvaluated, RulesEvaluated, Transitions, EvaluationLag, PendingEventAge, ScheduledRunDuration,
		DeliveryAttempts, DeliveryLatency, RetriesScheduled,
		Dials, IdleEnds,
	}
}

// Recorder takes one observation of a metric: its value and the values of
// its Dims, in order. Implementations are safe for concurrent use.
type Recorder interface {
	Record(m Metric, value float64, dims ...string)
}

// Nop records nothing.
type Nop struct{}

// Record implements Recorder.
func (Nop) Record(Metric, float64, ...string) {}

// Or returns r, or Nop when r is nil: the packages that take an optional
// Recorder call it unconditionally.
func Or(r Recorder) Recorder {
	if r == nil {
		return Nop{}
	}
	return r
}

// Multi records to every recorder.
type Multi []Recorder

// Record implements Recorder.
func (m Multi) Record(metric Metric, v float64, dims ...string) {
	for _, r := range m {
		r.Record(metric, v, dims...)
	}
}
