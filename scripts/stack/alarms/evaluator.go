package alarms

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Change is one alarm's state change.
type Change struct {
	Alarm      *Alarm
	Old, New   State
	Reason     string
	At         time.Time
	Datapoints []float64 // the evaluated periods', oldest first; NaN missing
}

// Evaluator evaluates alarms on a store.
type Evaluator struct {
	Store  *Store
	Alarms []*Alarm
	Now    func() time.Time // the alarms' clock (see Scaled)

	mu     sync.Mutex
	states map[string]State
	waits  []waiter
}

type waiter struct {
	alarm string
	state State
	ch    chan struct{}
}

// State returns an alarm's current state: INSUFFICIENT_DATA until its
// first evaluation, as a new CloudWatch alarm.
func (e *Evaluator) State(name string) State {
	e.mu.Lock()
	defer e.mu.Unlock()
	if s, ok := e.states[name]; ok {
		return s
	}
	return InsufficientData
}

// Alarm returns the alarm of a name, or nil.
func (e *Evaluator) Alarm(name string) *Alarm {
	for _, a := range e.Alarms {
		if a.Name == name {
			return a
		}
	}
	return nil
}

// Evaluate evaluates every alarm at the clock's time and returns the
// changes, in the order of Alarms.
func (e *Evaluator) Evaluate() []Change {
	now := e.Now()
	var changes []Change
	var longest time.Duration
	for _, a := range e.Alarms {
		longest = max(longest, time.Duration(a.EvaluationPeriods+1)*a.Period)
		points := a.Datapoints(e.Store, now)
		old := e.State(a.Name)
		next := a.Next(old, points)
		if next == old {
			continue
		}
		e.mu.Lock()
		if e.states == nil {
			e.states = map[string]State{}
		}
		e.states[a.Name] = next
		kept := e.waits[:0]
		for _, w := range e.waits {
			if w.alarm == a.Name && w.state == next {
				close(w.ch)
				continue
			}
			kept = append(kept, w)
		}
		e.waits = kept
		e.mu.Unlock()
		changes = append(changes, Change{Alarm: a, Old: old, New: next, At: now, Datapoints: points, Reason: a.reason(next, points)})
	}
	e.Store.Prune(now.Add(-longest))
	return changes
}

// Entered returns a channel closed when the alarm next enters state (not
// when it is already in it).
func (e *Evaluator) Entered(name string, s State) <-chan struct{} {
	e.mu.Lock()
	defer e.mu.Unlock()
	ch := make(chan struct{})
	e.waits = append(e.waits, waiter{alarm: name, state: s, ch: ch})
	return ch
}

// Run evaluates every tick of real time until ctx ends and hands each
// change to notify.
func (e *Evaluator) Run(ctx context.Context, tick time.Duration, notify func(Change)) {
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		for _, c := range e.Evaluate() {
			notify(c)
		}
	}
}

// Scaled returns a clock that starts at start and runs scale times faster
// than real: with scale 60 a five-minute period passes in five seconds.
func Scaled(real func() time.Time, scale float64) func() time.Time {
	if scale <= 0 {
		scale = 1
	}
	origin := real()
	return func() time.Time {
		return origin.Add(time.Duration(float64(real().Sub(origin)) * scale))
	}
}

var comparisonWords = map[string]string{GreaterThan: "greater than", GreaterThanOrEqual: "greater than or equal to",
	LessThan: "less than", LessThanOrEqual: "less than or equal to"}

// reason is the NewStateReason, worded as CloudWatch words it.
func (a *Alarm) reason(s State, points []float64) string {
	if s == InsufficientData {
		return fmt.Sprintf("Insufficient Data: %d datapoints were unknown.", len(points))
	}
	var shown []string
	breaching := 0
	for _, v := range points {
		if math.IsNaN(v) {
			continue
		}
		shown = append(shown, strconv.FormatFloat(v, 'f', -1, 64))
		if a.breaches(v) {
			breaching++
		}
	}
	if len(shown) == 0 {
		treated := "NonBreaching"
		if a.TreatMissingData == Breaching {
			treated = "Breaching"
		}
		return fmt.Sprintf("Threshold Crossed: no datapoints were received for %d periods and %d missing datapoints were treated as [%s].",
			len(points), len(points), treated)
	}
	verb, n := "was", breaching
	if s == OK {
		verb, n = "was not", len(shown)-breaching
	}
	return fmt.Sprintf("Threshold Crossed: %d out of the last %d datapoints [%s] %s %s the threshold (%s) (minimum %d datapoints for OK -> ALARM transition).",
		n, len(points), strings.Join(shown, ", "), verb, comparisonWords[a.Comparison], strconv.FormatFloat(a.Threshold, 'f', -1, 64), a.DatapointsToAlarm)
}

// Notification is CloudWatch's alarm notification, the Message of the SNS
// publication.
type Notification struct {
	AlarmName               string
	AlarmDescription        string
	AWSAccountId            string
	NewStateValue           State
	NewStateReason          string
	StateChangeTime         string
	Region                  string
	AlarmArn                string
	OldStateValue           State
	AlarmActions            []string
	OKActions               []string
	InsufficientDataActions []string
	Trigger                 Trigger
}

// Trigger describes the alarm's metric, or its Metrics for metric math.
type Trigger struct {
	MetricName         string          `json:",omitempty"`
	Namespace          string          `json:",omitempty"`
	StatisticType      string          `json:",omitempty"`
	Statistic          string          `json:",omitempty"`
	ExtendedStatistic  string          `json:",omitempty"`
	Dimensions         []TriggerDim    `json:",omitempty"`
	Metrics            []TriggerMetric `json:",omitempty"`
	Period             int             `json:",omitempty"`
	EvaluationPeriods  int
	DatapointsToAlarm  int
	ComparisonOperator string
	Threshold          float64
	TreatMissingData   string
}

// TriggerDim is one dimension, in the notification's lower case.
type TriggerDim struct {
	Value string `json:"value"`
	Name  string `json:"name"`
}

// TriggerMetric is one query of a metric math alarm.
type TriggerMetric struct {
	ID         string `json:"Id"`
	Expression string `json:",omitempty"`
	MetricStat *struct {
		Metric struct {
			Namespace  string
			MetricName string
			Dimensions []TriggerDim
		}
		Period int
		Stat   string
	} `json:",omitempty"`
	ReturnData bool
}

// Notification returns the change's notification.
func (c Change) Notification(account, region string) Notification {
	a := c.Alarm
	n := Notification{AlarmName: a.Name, AlarmDescription: a.Description, AWSAccountId: account, NewStateValue: c.New,
		NewStateReason: c.Reason, StateChangeTime: c.At.UTC().Format("2006-01-02T15:04:05.000-0700"), Region: region,
		AlarmArn: "arn:aws:cloudwatch:" + region + ":" + account + ":alarm:" + a.Name, OldStateValue: c.Old,
		AlarmActions: orEmpty(a.AlarmActions), OKActions: orEmpty(a.OKActions), InsufficientDataActions: orEmpty(a.InsufficientData),
		Trigger: Trigger{EvaluationPeriods: a.EvaluationPeriods, DatapointsToAlarm: a.DatapointsToAlarm,
			ComparisonOperator: a.Comparison, Threshold: a.Threshold, TreatMissingData: a.TreatMissingData}}
	dimsOf := func(m Metric) []TriggerDim {
		var out []TriggerDim
		for k, v := range m.Dimensions() {
			out = append(out, TriggerDim{Value: v, Name: k})
		}
		return out
	}
	if len(a.Queries) == 1 && a.Queries[0].Stat != nil {
		s := a.Queries[0].Stat
		t := &n.Trigger
		t.MetricName, t.Namespace, t.Dimensions, t.Period = s.Metric.Name, s.Metric.Namespace, dimsOf(s.Metric), int(a.Period/time.Second)
		if _, ok := percentile(s.Stat); ok {
			t.StatisticType, t.ExtendedStatistic = "ExtendedStatistic", s.Stat
		} else {
			t.StatisticType, t.Statistic = "Statistic", strings.ToUpper(s.Stat)
		}
		return n
	}
	for _, q := range a.Queries {
		tm := TriggerMetric{ID: q.ID, Expression: q.Expression, ReturnData: q.ReturnData}
		if q.Stat != nil {
			tm.MetricStat = &struct {
				Metric struct {
					Namespace  string
					MetricName string
					Dimensions []TriggerDim
				}
				Period int
				Stat   string
			}{Period: int(q.Stat.Period / time.Second), Stat: q.Stat.Stat}
			tm.MetricStat.Metric.Namespace, tm.MetricStat.Metric.MetricName, tm.MetricStat.Metric.Dimensions = q.Stat.Metric.Namespace, q.Stat.Metric.Name, dimsOf(q.Stat.Metric)
		}
		n.Trigger.Metrics = append(n.Trigger.Metrics, tm)
	}
	return n
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// Subject is the SNS subject CloudWatch gives a notification.
func (c Change) Subject(region string) string {
	s := fmt.Sprintf("%s: %q in %s", c.New, c.Alarm.Name, region)
	if len(s) > 100 {
		s = s[:100]
	}
	return s
}

// JSON is the notification as published.
func (n Notification) JSON() string {
	b, _ := json.Marshal(n)
	return string(b)
}
