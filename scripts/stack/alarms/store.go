// Package alarms evaluates a template's CloudWatch alarms on this machine,
// as CloudWatch does: the metrics the stack runner collects (the functions'
// EMF lines and the service metrics it computes) go into a Store; each
// AWS::CloudWatch::Alarm is read into an Alarm (a metric or a metric math
// expression, statistic, period, evaluation periods, datapoints to alarm,
// comparison, threshold, treatment of missing data); an Evaluator computes
// each alarm's state on an injected clock and reports every change, which
// the runner publishes to the alarm's SNS actions in CloudWatch's
// notification format.
package alarms

import (
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

// Metric names one metric: its namespace, name and dimensions. CloudWatch
// matches a metric on all three: a datapoint recorded with dimensions
// {Host} is not one of {Host, Route}.
type Metric struct {
	Namespace string
	Name      string
	Dims      string // canonical: "k=v" pairs sorted by name, comma-separated
}

// NewMetric returns the metric of a namespace, name and dimensions.
func NewMetric(namespace, name string, dims map[string]string) Metric {
	keys := make([]string, 0, len(dims))
	for k := range dims {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(k + "=" + dims[k])
	}
	return Metric{Namespace: namespace, Name: name, Dims: b.String()}
}

// Dimensions returns the metric's dimensions.
func (m Metric) Dimensions() map[string]string {
	out := map[string]string{}
	if m.Dims == "" {
		return out
	}
	for _, kv := range strings.Split(m.Dims, ",") {
		k, v, _ := strings.Cut(kv, "=")
		out[k] = v
	}
	return out
}

func (m Metric) String() string { return m.Namespace + "/" + m.Name + "{" + m.Dims + "}" }

type point struct {
	at time.Time
	v  float64
}

// Store holds the datapoints of every metric. It is safe for concurrent
// use.
type Store struct {
	mu     sync.Mutex
	points map[Metric][]point
	names  map[[2]string]bool // namespace, name: every metric ever put
}

// NewStore returns an empty store.
func NewStore() *Store {
	return &Store{points: map[Metric][]point{}, names: map[[2]string]bool{}}
}

// Put records one value of a metric at a time. Values that are not finite
// are dropped, as CloudWatch refuses them.
func (s *Store) Put(m Metric, at time.Time, v float64) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.points[m] = append(s.points[m], point{at, v})
	s.names[[2]string{m.Namespace, m.Name}] = true
}

// Values returns the values of a metric in [from, to).
func (s *Store) Values(m Metric, from, to time.Time) []float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []float64
	for _, p := range s.points[m] {
		if !p.at.Before(from) && p.at.Before(to) {
			out = append(out, p.v)
		}
	}
	return out
}

// Seen tells whether any datapoint of a metric name, whatever its
// dimensions, was ever put.
func (s *Store) Seen(namespace, name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.names[[2]string{namespace, name}]
}

// Prune drops the datapoints older than before: no alarm looks back so far.
func (s *Store) Prune(before time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for m, ps := range s.points {
		i := sort.Search(len(ps), func(i int) bool { return !ps[i].at.Before(before) })
		if i == len(ps) {
			delete(s.points, m)
			continue
		}
		s.points[m] = slices.Clone(ps[i:])
	}
}

// Statistic computes a CloudWatch statistic of a period's values: Sum,
// Average, Minimum, Maximum, SampleCount or a percentile pNN (pNN.N). ok is
// false when the period has no value (missing data) or the statistic is
// unknown.
func Statistic(stat string, vs []float64) (float64, bool) {
	if len(vs) == 0 {
		return 0, false
	}
	switch stat {
	case "Sum":
		var s float64
		for _, v := range vs {
			s += v
		}
		return s, true
	case "Average":
		s, _ := Statistic("Sum", vs)
		return s / float64(len(vs)), true
	case "Minimum":
		return slices.Min(vs), true
	case "Maximum":
		return slices.Max(vs), true
	case "SampleCount":
		return float64(len(vs)), true
	}
	p, ok := percentile(stat)
	if !ok {
		return 0, false
	}
	sorted := slices.Clone(vs)
	slices.Sort(sorted)
	// Nearest rank: the smallest value with at least p% of the values at
	// or below it.
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	return sorted[min(max(rank, 1), len(sorted))-1], true
}

// percentile reads "p99" or "p99.9".
func percentile(stat string) (float64, bool) {
	if len(stat) < 2 || (stat[0] != 'p' && stat[0] != 'P') {
		return 0, false
	}
	var p float64
	var frac float64
	digits := 0
	for _, c := range stat[1:] {
		switch {
		case c >= '0' && c <= '9' && frac == 0:
			p = p*10 + float64(c-'0')
			digits++
		case c >= '0' && c <= '9':
			p += float64(c-'0') * frac
			frac /= 10
			digits++
		case c == '.' && frac == 0:
			frac = 0.1
		default:
			return 0, false
		}
	}
	return p, digits > 0 && p > 0 && p <= 100
}
