// Package emf writes the telemetry catalog's metrics as CloudWatch
// Embedded Metric Format lines: JSON log lines that CloudWatch Logs turns
// into metrics, with no API call and no added latency. A Lambda function
// records into a Batch during an invocation and flushes it at the end
// (Flushing): one line per dimension-value combination, whatever the
// number of observations, instead of a line per event.
//
// The format (CloudWatch_Embedded_Metric_Format_Specification): a root
// object with an "_aws" member holding "Timestamp" (epoch milliseconds)
// and "CloudWatchMetrics", a list of directives, each with a "Namespace",
// "Dimensions" (a list of dimension sets, each at most 30 names of string
// members of the root) and "Metrics" (at most 100 definitions, each a
// "Name" and a "Unit" from CloudWatch's list); every metric is a member of
// the root holding a number or an array of at most 100 numbers. Validate
// checks a line against these rules.
package emf

import (
	"context"
	"encoding/json"
	"io"
	"sync"
	"time"

	"github.com/voiceops/opsapi/shared/telemetry"
)

// The specification's limits.
const (
	MaxMetrics    = 100 // metric definitions in one directive
	MaxValues     = 100 // values in one metric's array
	MaxDimensions = 30  // names in one dimension set
)

// Batch collects observations until Flush. It is safe for concurrent use.
type Batch struct {
	w   io.Writer
	now func() time.Time

	mu     sync.Mutex
	groups map[groupKey]*group
	order  []groupKey
}

// New returns a batch that writes its lines to w (os.Stdout in a
// function: Lambda sends stdout to CloudWatch Logs, which extracts them).
func New(w io.Writer, now func() time.Time) *Batch {
	if now == nil {
		now = time.Now
	}
	return &Batch{w: w, now: now, groups: map[groupKey]*group{}}
}

// groupKey identifies the observations sharing one line: the same
// dimension names and values, and the same dimension sets (sets: bit i is
// the set made of the dimensions whose positions are the bits of i).
type groupKey struct {
	sets          uint16
	names, values [telemetry.MaxDims]string
}

// group is one line's observations.
type group struct {
	key     groupKey
	n       int // dimensions
	dimSets [][]string
	metrics map[string]*series
	order   []string
}

type series struct {
	unit   telemetry.Unit
	values []float64 // one summed value for counts
}

// Record implements telemetry.Recorder. Counts are summed; other units
// keep each value (CloudWatch computes percentiles from them).
func (b *Batch) Record(m telemetry.Metric, v float64, dims ...string) {
	var k groupKey
	n := min(len(m.Dims), len(dims), telemetry.MaxDims)
	copy(k.names[:], m.Dims[:n])
	copy(k.values[:], dims[:n])
	for _, set := range m.Sets {
		var bits uint
		for _, name := range set {
			for i := range n {
				if k.names[i] == name {
					bits |= 1 << i
				}
			}
		}
		k.sets |= 1 << bits
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	g := b.groups[k]
	if g == nil {
		g = &group{key: k, n: n, dimSets: m.Sets, metrics: map[string]*series{}}
		b.groups[k] = g
		b.order = append(b.order, k)
	}
	s := g.metrics[m.Name]
	if s == nil {
		s = &series{unit: m.Unit}
		g.metrics[m.Name] = s
		g.order = append(g.order, m.Name)
	}
	if m.Unit == telemetry.Count && len(s.values) == 1 {
		s.values[0] += v
		return
	}
	s.values = append(s.values, v)
}

// Flush writes the batch's lines and empties it. A write error is
// returned; the observations are dropped either way (metrics are best
// effort, and the next invocation must not repeat them).
func (b *Batch) Flush() error {
	b.mu.Lock()
	groups, order := b.groups, b.order
	b.groups, b.order = map[groupKey]*group{}, nil
	b.mu.Unlock()
	if len(order) == 0 {
		return nil
	}
	ts := b.now().UnixMilli()
	var out []byte
	for _, k := range order {
		for _, line := range groups[k].lines(ts) {
			out = append(out, line...)
			out = append(out, '\n')
		}
	}
	_, err := b.w.Write(out)
	return err
}

type root struct {
	Timestamp         int64       `json:"Timestamp"`
	CloudWatchMetrics []directive `json:"CloudWatchMetrics"`
}

type directive struct {
	Namespace  string       `json:"Namespace"`
	Dimensions [][]string   `json:"Dimensions"`
	Metrics    []definition `json:"Metrics"`
}

type definition struct {
	Name string         `json:"Name"`
	Unit telemetry.Unit `json:"Unit"`
}

// lines renders a group: as many lines as its longest array needs (100
// values each). A group has at most MaxMetrics metrics: the catalog has
// fewer (a test of telemetry checks it).
func (g *group) lines(ts int64) [][]byte {
	var out [][]byte
	for start := 0; ; start += MaxValues {
		doc := map[string]any{}
		d := directive{Namespace: telemetry.Namespace, Dimensions: g.dimSets}
		for _, n := range g.order {
			s := g.metrics[n]
			if len(s.values) <= start {
				continue
			}
			d.Metrics = append(d.Metrics, definition{Name: n, Unit: s.unit})
			vs := s.values[start:min(len(s.values), start+MaxValues)]
			if len(vs) == 1 {
				doc[n] = vs[0]
			} else {
				doc[n] = vs
			}
		}
		if len(d.Metrics) == 0 {
			return out
		}
		for i := range g.n {
			doc[g.key.names[i]] = g.key.values[i]
		}
		doc["_aws"] = root{Timestamp: ts, CloudWatchMetrics: []directive{d}}
		line, _ := json.Marshal(doc) // strings and numbers only: cannot fail
		out = append(out, line)
	}
}

// Flushing wraps a Lambda handler so that the batch is flushed when each
// invocation ends, whatever its outcome.
func Flushing[In, Out any](b *Batch, h func(context.Context, In) (Out, error)) func(context.Context, In) (Out, error) {
	return func(ctx context.Context, in In) (Out, error) {
		defer func() { _ = b.Flush() }()
		return h(ctx, in)
	}
}
