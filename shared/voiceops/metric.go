package voiceops

import (
	"strconv"
	"time"
)

// MetricKind is what a metric event reports: the "metric" of the internal
// intake, counted per scope and minute by shared/metrics.
type MetricKind string

// The kinds, each defined once in metricKindDefs below.
const (
	// KindTurnLatency is one turn's latency; the value is milliseconds.
	KindTurnLatency MetricKind = "turn_latency"
	// The counts: the value is how many (the intake's default is 1).
	KindAPIErrors      MetricKind = "api_errors"
	KindFunctionErrors MetricKind = "function_errors"
	KindCallCrashes    MetricKind = "call_crashes"
	KindCallVolume     MetricKind = "call_volume"
	// KindActivity only marks that the scope reported something; the value
	// is ignored. Every event of any kind is also activity.
	KindActivity MetricKind = "activity"
)

// MetricValue is what the value of a kind's events is: it decides how the
// intake validates them, how buckets count them and which rule metrics
// read them.
type MetricValue int

const (
	// ValueCount: an integer count (the intake's default is 1); a bucket
	// keeps the exact sum, and the rule metric named after the kind is the
	// sum over its window.
	ValueCount MetricValue = iota + 1
	// ValueLatency: milliseconds, 0 to 86,400,000; a bucket counts the
	// events and keeps their values in a sketch, and each of the kind's
	// Percentiles is a rule metric, <kind>_p<N>.
	ValueLatency
	// ValueIgnored: the event only marks activity; the value is ignored.
	ValueIgnored
)

// MetricKindDef is one kind of metric event: the entry of metricKindDefs.
type MetricKindDef struct {
	Kind  MetricKind
	Value MetricValue
	// Percentiles, for a latency kind, are the rule metrics it feeds:
	// <kind>_p<N>, the N-th percentile (nearest rank) of the window.
	Percentiles []int
}

// metricKindDefs is the one list of metric kinds, in documentation order.
// Everything else is derived from it: the rule metrics (Metrics, Source),
// the intake's validation (shared/metrics, shared/alerts/studioapi), a bucket's
// counts (shared/metrics/buckets: one count per kind), the DynamoDB attributes
// (shared/store/dynamo: named after the kind) and the contract test that every
// store keeps every kind's counts (shared/store/storetest). The OpenAPI
// document's enums are checked against it (shared/platform/apispec). Adding a kind
// is an entry here, its enum values in shared/platform/apispec/openapi.json, and
// its producer. One limit: a bucket has one latency sketch, turn_latency's
// (a test fails on a second latency kind).
var metricKindDefs = [...]MetricKindDef{
	{Kind: KindTurnLatency, Value: ValueLatency, Percentiles: []int{50, 95}},
	{Kind: KindAPIErrors, Value: ValueCount},
	{Kind: KindFunctionErrors, Value: ValueCount},
	{Kind: KindCallCrashes, Value: ValueCount},
	{Kind: KindCallVolume, Value: ValueCount},
	{Kind: KindActivity, Value: ValueIgnored},
}

// NumMetricKinds is how many kinds there are: the length of a bucket's
// counts.
const NumMetricKinds = len(metricKindDefs)

// MetricKinds lists every kind in documentation order.
var MetricKinds = func() []MetricKind {
	ks := make([]MetricKind, len(metricKindDefs))
	for i, d := range metricKindDefs {
		ks[i] = d.Kind
	}
	return ks
}()

// MetricKindDefs returns every kind's definition, in documentation order
// (a copy).
func MetricKindDefs() []MetricKindDef { return append([]MetricKindDef(nil), metricKindDefs[:]...) }

// Index returns the kind's place in MetricKinds (and so in a bucket's
// counts); false for an unknown kind.
func (k MetricKind) Index() (int, bool) {
	for i := range metricKindDefs {
		if metricKindDefs[i].Kind == k {
			return i, true
		}
	}
	return -1, false
}

// Value returns what the kind's values are; 0 for an unknown kind.
func (k MetricKind) Value() MetricValue {
	_, v := k.Lookup()
	return v
}

// Lookup returns the kind's Index and Value at once (-1 and 0 for an
// unknown kind): one look in the table, for the code that counts events.
func (k MetricKind) Lookup() (int, MetricValue) {
	for i := range metricKindDefs {
		if metricKindDefs[i].Kind == k {
			return i, metricKindDefs[i].Value
		}
	}
	return -1, 0
}

// IsCount reports whether the kind's value is a count.
func (k MetricKind) IsCount() bool { return k.Value() == ValueCount }

// IsLatency reports whether the kind's value is a latency in milliseconds.
func (k MetricKind) IsLatency() bool { return k.Value() == ValueLatency }

// Metric is what an alert rule watches: a statistic, over the rule's
// window, of one kind of metric event (its MetricSource). The metrics
// derive from metricKindDefs: one per count kind, named after it, and one
// per percentile of a latency kind.
type Metric string

// The rule metrics by name, for the code that names one.
const (
	MetricTurnLatencyP50 = Metric(KindTurnLatency + "_p50")
	MetricTurnLatencyP95 = Metric(KindTurnLatency + "_p95")
	MetricAPIErrors      = Metric(KindAPIErrors)
	MetricFunctionErrors = Metric(KindFunctionErrors)
	MetricCallCrashes    = Metric(KindCallCrashes)
	MetricCallVolume     = Metric(KindCallVolume)
)

// MetricSource is how a rule metric is computed from metric events.
type MetricSource struct {
	// Kind is the events it reads.
	Kind MetricKind
	// Quantile, for a latency kind, is the percentile of the window's
	// latencies (nearest rank). It is 0 for a count, whose value is the sum
	// of the window's values.
	Quantile float64
}

// metricSource is one rule metric and how it is computed.
type metricSource struct {
	metric Metric
	source MetricSource
}

// metricSources joins every rule metric to its kind, in documentation
// order: derived from metricKindDefs.
var metricSources = func() []metricSource {
	var out []metricSource
	for _, d := range metricKindDefs {
		switch d.Value {
		case ValueCount:
			out = append(out, metricSource{Metric(d.Kind), MetricSource{Kind: d.Kind}})
		case ValueLatency:
			for _, p := range d.Percentiles {
				m := Metric(string(d.Kind) + "_p" + strconv.Itoa(p))
				out = append(out, metricSource{m, MetricSource{Kind: d.Kind, Quantile: float64(p) / 100}})
			}
		}
	}
	return out
}()

// Metrics lists every metric in documentation order.
var Metrics = func() []Metric {
	ms := make([]Metric, len(metricSources))
	for i, d := range metricSources {
		ms[i] = d.metric
	}
	return ms
}()

// Source returns how m is computed; false when m is not a metric.
func (m Metric) Source() (MetricSource, bool) {
	for _, d := range metricSources {
		if d.metric == m {
			return d.source, true
		}
	}
	return MetricSource{}, false
}

// MetricRetention is how long metric buckets are kept (from the start of
// their minute), and how old a metric event may be.
const MetricRetention = 2 * time.Hour

// MetricMinuteRetention is how long the one-minute buckets are kept in the
// store (the metric series and the rule preview read them); events are
// still accepted only MetricRetention old.
const MetricMinuteRetention = 48 * time.Hour

// MetricHourRetention is how long the hourly roll-ups of the buckets are
// kept (shared/metrics/series).
const MetricHourRetention = 30 * 24 * time.Hour
