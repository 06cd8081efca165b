package evaluator

import (
	"time"

	"github.com/voiceops/opsapi/shared/platform/telemetry"
)

// The Source dimension of the evaluation metrics: what started it.
const (
	SourceStream   = "stream"   // the metrics table's stream (deployed)
	SourceSchedule = "schedule" // the one-minute schedule's shard runs
	SourceData     = "data"     // the in-process trigger (dev server)
)

// Observe records one evaluation batch's metrics: scopes and rules
// evaluated, transitions (events written), and the lag from the stored
// data (or the schedule's tick) to this evaluation.
func (e *Evaluator) Observe(source string, st Stats, lag time.Duration, hasLag bool) {
	m := telemetry.Or(e.Telemetry)
	m.Record(telemetry.ScopesEvaluated, float64(st.Scopes), source)
	m.Record(telemetry.RulesEvaluated, float64(st.Rules), source)
	m.Record(telemetry.Transitions, float64(st.Events), source)
	if hasLag {
		m.Record(telemetry.EvaluationLag, float64(max(lag, 0).Milliseconds()), source)
	}
}
