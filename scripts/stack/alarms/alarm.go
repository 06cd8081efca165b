package alarms

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"time"
)

// State is an alarm's state.
type State string

// The states.
const (
	OK               State = "OK"
	Alarming         State = "ALARM"
	InsufficientData State = "INSUFFICIENT_DATA"
)

// The comparison operators CloudWatch has for static thresholds.
const (
	GreaterThan        = "GreaterThanThreshold"
	GreaterThanOrEqual = "GreaterThanOrEqualToThreshold"
	LessThan           = "LessThanThreshold"
	LessThanOrEqual    = "LessThanOrEqualToThreshold"
)

// The treatments of missing data.
const (
	Missing       = "missing"
	NotBreaching  = "notBreaching"
	Breaching     = "breaching"
	IgnoreMissing = "ignore"
)

// MetricStat is one metric and the statistic of it an alarm reads.
type MetricStat struct {
	Metric Metric
	Stat   string
	Period time.Duration
}

// Query is one member of an alarm's Metrics: a metric statistic or a math
// expression over the others, by ID.
type Query struct {
	ID         string
	Expression string
	Stat       *MetricStat
	ReturnData bool
}

// Alarm is one AWS::CloudWatch::Alarm.
type Alarm struct {
	Name        string
	Description string
	// Queries are the alarm's metric (one query, "m1") or its Metrics.
	Queries           []Query
	Period            time.Duration
	EvaluationPeriods int
	DatapointsToAlarm int
	Comparison        string
	Threshold         float64
	TreatMissingData  string
	ActionsEnabled    bool
	AlarmActions      []string
	OKActions         []string
	InsufficientData  []string
}

// Metrics returns the metrics the alarm reads.
func (a *Alarm) Metrics() []MetricStat {
	var out []MetricStat
	for _, q := range a.Queries {
		if q.Stat != nil {
			out = append(out, *q.Stat)
		}
	}
	return out
}

// Actions returns the actions of entering a state.
func (a *Alarm) Actions(s State) []string {
	if !a.ActionsEnabled {
		return nil
	}
	switch s {
	case Alarming:
		return a.AlarmActions
	case OK:
		return a.OKActions
	}
	return a.InsufficientData
}

// properties are the alarm's template properties, resolved.
type properties struct {
	AlarmName               string
	AlarmDescription        string
	MetricName              string
	Namespace               string
	Dimensions              []dimension
	Statistic               string
	ExtendedStatistic       string
	Period                  float64
	EvaluationPeriods       float64
	DatapointsToAlarm       float64
	ComparisonOperator      string
	Threshold               *float64
	TreatMissingData        string
	ActionsEnabled          *bool
	AlarmActions            []string
	OKActions               []string
	InsufficientDataActions []string
	Metrics                 []struct {
		ID         string `json:"Id"`
		Expression string
		ReturnData *bool
		Period     float64
		MetricStat *struct {
			Metric struct {
				MetricName string
				Namespace  string
				Dimensions []dimension
			}
			Period float64
			Stat   string
		}
	}
}

type dimension struct{ Name, Value string }

func dims(ds []dimension) map[string]string {
	m := map[string]string{}
	for _, d := range ds {
		m[d.Name] = d.Value
	}
	return m
}

// Parse reads an alarm from its resolved template properties; id names
// it when it has no AlarmName.
func Parse(id string, props map[string]any) (*Alarm, error) {
	b, err := json.Marshal(props)
	if err != nil {
		return nil, err
	}
	var p properties
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, fmt.Errorf("alarm %s: %w", id, err)
	}
	a := &Alarm{Name: p.AlarmName, Description: p.AlarmDescription, EvaluationPeriods: int(p.EvaluationPeriods),
		DatapointsToAlarm: int(p.DatapointsToAlarm), Comparison: p.ComparisonOperator, TreatMissingData: p.TreatMissingData,
		ActionsEnabled: p.ActionsEnabled == nil || *p.ActionsEnabled, AlarmActions: p.AlarmActions, OKActions: p.OKActions,
		InsufficientData: p.InsufficientDataActions, Period: time.Duration(p.Period) * time.Second}
	if a.Name == "" {
		a.Name = id
	}
	if a.TreatMissingData == "" {
		a.TreatMissingData = Missing
	}
	switch a.TreatMissingData {
	case Missing, NotBreaching, Breaching, IgnoreMissing:
	default:
		return nil, fmt.Errorf("alarm %s: TreatMissingData %q", a.Name, a.TreatMissingData)
	}
	switch a.Comparison {
	case GreaterThan, GreaterThanOrEqual, LessThan, LessThanOrEqual:
	default:
		return nil, fmt.Errorf("alarm %s: ComparisonOperator %q is not a static threshold's", a.Name, a.Comparison)
	}
	if p.Threshold == nil {
		return nil, fmt.Errorf("alarm %s: no Threshold", a.Name)
	}
	a.Threshold = *p.Threshold
	if a.EvaluationPeriods < 1 {
		return nil, fmt.Errorf("alarm %s: EvaluationPeriods %d", a.Name, a.EvaluationPeriods)
	}
	if a.DatapointsToAlarm == 0 {
		a.DatapointsToAlarm = a.EvaluationPeriods
	}
	if a.DatapointsToAlarm < 1 || a.DatapointsToAlarm > a.EvaluationPeriods {
		return nil, fmt.Errorf("alarm %s: DatapointsToAlarm %d of %d", a.Name, a.DatapointsToAlarm, a.EvaluationPeriods)
	}
	if p.MetricName != "" {
		stat := p.Statistic
		if stat == "" {
			stat = p.ExtendedStatistic
		}
		a.Queries = []Query{{ID: "m1", ReturnData: true, Stat: &MetricStat{Metric: NewMetric(p.Namespace, p.MetricName, dims(p.Dimensions)), Stat: stat, Period: a.Period}}}
	}
	returned := 0
	for _, m := range p.Metrics {
		q := Query{ID: m.ID, Expression: m.Expression, ReturnData: m.ReturnData == nil || *m.ReturnData}
		if m.MetricStat != nil {
			ms := m.MetricStat
			q.Stat = &MetricStat{Metric: NewMetric(ms.Metric.Namespace, ms.Metric.MetricName, dims(ms.Metric.Dimensions)), Stat: ms.Stat,
				Period: time.Duration(ms.Period) * time.Second}
			if a.Period == 0 {
				a.Period = q.Stat.Period
			}
		} else if m.Period > 0 && a.Period == 0 {
			a.Period = time.Duration(m.Period) * time.Second
		}
		if q.ReturnData {
			returned++
		}
		a.Queries = append(a.Queries, q)
	}
	if len(a.Queries) == 0 {
		return nil, fmt.Errorf("alarm %s: neither MetricName nor Metrics", a.Name)
	}
	if len(p.Metrics) > 0 && returned != 1 {
		return nil, fmt.Errorf("alarm %s: %d of its Metrics return data, want 1", a.Name, returned)
	}
	if a.Period <= 0 {
		return nil, fmt.Errorf("alarm %s: no Period", a.Name)
	}
	for _, q := range a.Queries {
		if q.Stat != nil {
			if _, ok := Statistic(q.Stat.Stat, []float64{0}); !ok {
				return nil, fmt.Errorf("alarm %s: statistic %q", a.Name, q.Stat.Stat)
			}
			continue
		}
		e, err := parseExpr(q.Expression)
		if err != nil {
			return nil, fmt.Errorf("alarm %s: expression %s: %w", a.Name, q.ID, err)
		}
		named := map[string]bool{}
		ids(e, named)
		for id := range named {
			if !slices.ContainsFunc(a.Queries, func(q Query) bool { return q.ID == id }) {
				return nil, fmt.Errorf("alarm %s: expression %s names no query %q", a.Name, q.ID, id)
			}
		}
	}
	return a, nil
}

// Datapoints returns the alarm's value in each of its last
// EvaluationPeriods complete periods before now, oldest first; NaN where a
// period has no data. Periods are aligned on multiples of the period
// since the epoch, as CloudWatch aligns them.
func (a *Alarm) Datapoints(s *Store, now time.Time) []float64 {
	end := now.Truncate(a.Period)
	out := make([]float64, a.EvaluationPeriods)
	for i := range out {
		to := end.Add(-time.Duration(a.EvaluationPeriods-1-i) * a.Period)
		out[i] = a.value(s, to.Add(-a.Period), to)
	}
	return out
}

// value is the alarm's returned query over [from, to).
func (a *Alarm) value(s *Store, from, to time.Time) float64 {
	vars := map[string]float64{}
	for _, q := range a.Queries {
		if q.Stat != nil {
			v, ok := Statistic(q.Stat.Stat, s.Values(q.Stat.Metric, from, to))
			if !ok {
				v = math.NaN()
			}
			vars[q.ID] = v
		}
	}
	// Expressions may refer to each other: evaluate until none changes
	// (a template lists them in any order).
	for range a.Queries {
		for _, q := range a.Queries {
			if q.Stat == nil {
				e, _ := parseExpr(q.Expression)
				vars[q.ID] = e.eval(vars)
			}
		}
	}
	for _, q := range a.Queries {
		if q.ReturnData {
			return vars[q.ID]
		}
	}
	return math.NaN()
}

// breaches tells whether a value crosses the threshold.
func (a *Alarm) breaches(v float64) bool {
	switch a.Comparison {
	case GreaterThan:
		return v > a.Threshold
	case GreaterThanOrEqual:
		return v >= a.Threshold
	case LessThan:
		return v < a.Threshold
	case LessThanOrEqual:
		return v <= a.Threshold
	}
	return false
}

// Next returns the state the datapoints (oldest first, NaN missing) move
// the alarm to from current, with CloudWatch's treatment of missing data:
//   - notBreaching and breaching count a missing datapoint as good or bad;
//   - missing evaluates the datapoints there are: with none the state is
//     INSUFFICIENT_DATA; with fewer than DatapointsToAlarm, ALARM when
//     all of them breach, else OK;
//   - ignore keeps the current state unless there are at least
//     DatapointsToAlarm datapoints.
//
// With enough datapoints, M of N: ALARM when at least DatapointsToAlarm
// breach, else OK. (CloudWatch may also look at datapoints before the N
// periods when some are missing; this looks at the N only.)
func (a *Alarm) Next(current State, points []float64) State {
	present, bad := 0, 0
	for _, v := range points {
		switch {
		case math.IsNaN(v) && a.TreatMissingData == Breaching:
			present++
			bad++
		case math.IsNaN(v) && a.TreatMissingData == NotBreaching:
			present++
		case math.IsNaN(v):
		default:
			present++
			if a.breaches(v) {
				bad++
			}
		}
	}
	m := a.DatapointsToAlarm
	switch {
	case present >= m && bad >= m:
		return Alarming
	case present >= m:
		return OK
	case a.TreatMissingData == IgnoreMissing:
		return current
	case present == 0:
		return InsufficientData
	case bad == present:
		return Alarming
	}
	return OK
}
