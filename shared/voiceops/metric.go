package voiceops

import "time"

// MetricKind is what a metric event reports: the "metric" of the internal
// intake, counted per scope and minute by shared/metrics.
type MetricKind string

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

// MetricKinds lists every kind in documentation order.
var MetricKinds = []MetricKind{KindTurnLatency, KindAPIErrors, KindFunctionErrors, KindCallCrashes, KindCallVolume, KindActivity}

// IsCount reports whether the kind's value is a count.
func (k MetricKind) IsCount() bool {
	switch k {
	case KindAPIErrors, KindFunctionErrors, KindCallCrashes, KindCallVolume:
		return true
	}
	return false
}

// Metric is what an alert rule watches: a statistic, over the rule's
// window, of one kind of metric event (its MetricSource). Names derive
// from the kinds, so each is written once.
type Metric string

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
	// Quantile, for turn latencies, is the percentile of the window's
	// latencies (nearest rank). It is 0 for a count, whose value is the sum
	// of the window's values.
	Quantile float64
}

// metricSources defines every rule metric, in documentation order: the one
// table joining rule metrics to metric kinds.
var metricSources = [...]struct {
	metric Metric
	source MetricSource
}{
	{MetricTurnLatencyP50, MetricSource{Kind: KindTurnLatency, Quantile: 0.50}},
	{MetricTurnLatencyP95, MetricSource{Kind: KindTurnLatency, Quantile: 0.95}},
	{MetricAPIErrors, MetricSource{Kind: KindAPIErrors}},
	{MetricFunctionErrors, MetricSource{Kind: KindFunctionErrors}},
	{MetricCallCrashes, MetricSource{Kind: KindCallCrashes}},
	{MetricCallVolume, MetricSource{Kind: KindCallVolume}},
}

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
// kept (shared/series).
const MetricHourRetention = 30 * 24 * time.Hour
