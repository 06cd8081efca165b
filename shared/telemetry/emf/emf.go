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
	"strings"
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
	groups map[string]*group
	order  []string
}

// New returns a batch that writes its lines to w (os.Stdout in a
// function: Lambda sends stdout to CloudWatch Logs, which extracts them).
func New(w io.Writer, now func() time.Time) *Batch {
	if now == nil {
		now = time.Now
	}
	return &Batch{w: w, now: now, groups: map[string]*group{}}
}

// group is the observations sharing one line: the same dimension sets
// and the same dimension values.
type group struct {
	sets    [][]string
	names   []string
	values  []string
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
	var key strings.Builder
	for _, s := range m.Sets {
		key.WriteString(strings.Join(s, ","))
		key.WriteByte(';')
	}
	key.WriteByte('|')
	names := m.Dims[:min(len(m.Dims), len(dims))]
	for i := range names {
		key.WriteString(names[i])
		key.WriteByte('=')
		key.WriteString(dims[i])
		key.WriteByte(0)
	}
	k := key.String()
	b.mu.Lock()
	defer b.mu.Unlock()
	g := b.groups[k]
	if g == nil {
		g = &group{sets: m.Sets, names: names, values: append([]string(nil), dims[:len(names)]...), metrics: map[string]*series{}}
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
	b.groups, b.order = map[string]*group{}, nil
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
// values each), each with at most MaxMetrics metrics.
func (g *group) lines(ts int64) [][]byte {
	var out [][]byte
	for start := 0; ; start += MaxValues {
		var names []string
		for _, n := range g.order {
			if len(g.metrics[n].values) > start {
				names = append(names, n)
			}
		}
		if len(names) == 0 {
			return out
		}
		for len(names) > 0 {
			chunk := names[:min(len(names), MaxMetrics)]
			names = names[len(chunk):]
			doc := map[string]any{}
			for i, n := range g.names {
				doc[n] = g.values[i]
			}
			d := directive{Namespace: telemetry.Namespace, Dimensions: g.sets}
			for _, n := range chunk {
				s := g.metrics[n]
				d.Metrics = append(d.Metrics, definition{Name: n, Unit: s.unit})
				vs := s.values[start:min(len(s.values), start+MaxValues)]
				if len(vs) == 1 {
					doc[n] = vs[0]
				} else {
					doc[n] = vs
				}
			}
			doc["_aws"] = root{Timestamp: ts, CloudWatchMetrics: []directive{d}}
			line, _ := json.Marshal(doc) // strings and numbers only: cannot fail
			out = append(out, line)
		}
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
