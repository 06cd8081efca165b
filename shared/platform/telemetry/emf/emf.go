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
	"io"
	"math"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/voiceops/opsapi/shared/platform/jsontext"
	"github.com/voiceops/opsapi/shared/platform/telemetry"
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

	mu      sync.Mutex
	groups  map[groupKey]*group
	order   []*group
	last    *group    // the group of the last Record: a request's next one is the same
	scratch [2][]byte // a line's metric definitions and members, reused
	// out is the lines of the next flush: the held lines (Held) and then
	// the metrics'; reused, nil while a flush writes.
	out []byte
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
	key    groupKey
	series []*series // in the order first recorded: a handful, searched in order
	// head and tail are a line's text before its metric definitions (from
	// the Timestamp's end) and after its members (the dimensions), made
	// once: they are the group's, whatever its values.
	head, tail []byte
}

type series struct {
	name string
	unit telemetry.Unit
	// def and member are the series' metric definition and its member's
	// key, made once.
	def, member []byte
	values      []float64 // one summed value for counts
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
	g := b.last
	if g == nil || g.key != k {
		g = b.groups[k]
		if g == nil {
			g = newGroup(k, n, m.Sets)
			b.groups[k] = g
			b.order = append(b.order, g)
		}
		b.last = g
	}
	var s *series
	for _, x := range g.series {
		if x.name == m.Name {
			s = x
			break
		}
	}
	if s == nil {
		s = newSeries(m.Name, m.Unit)
		g.series = append(g.series, s)
	}
	if m.Unit == telemetry.Count && len(s.values) == 1 {
		s.values[0] += v
		return
	}
	s.values = append(s.values, v)
}

// Held returns a writer of whole log lines that go out with the batch's
// next Flush, before its metric lines and in the same write: a function's
// access line and an invocation's metrics are one write, not two. It is
// for what is written at an invocation's end; a line written mid-way
// waits for the flush (and is lost with the invocation, as the metrics
// are), so anything else is logged as it happens.
func (b *Batch) Held() io.Writer { return held{b} }

type held struct{ b *Batch }

func (h held) Write(p []byte) (int, error) {
	h.b.mu.Lock()
	h.b.out = append(h.b.out, p...)
	h.b.mu.Unlock()
	return len(p), nil
}

// Flush writes the batch's lines and empties it. A write error is
// returned; the observations are dropped either way (metrics are best
// effort, and the next invocation must not repeat them). The groups are
// kept, emptied, for the next invocation's observations: their dimensions
// are the catalog's (hosts, routes, outcomes), a bounded set.
func (b *Batch) Flush() error {
	b.mu.Lock()
	out := b.out // the held lines, if any
	b.out = nil
	ts := b.now().UnixMilli()
	for _, g := range b.order {
		out = g.appendLines(out, ts, &b.scratch)
		for _, s := range g.series {
			s.values = s.values[:0]
		}
	}
	if len(b.order) > maxGroups {
		b.groups, b.order, b.last = map[groupKey]*group{}, nil, nil
	}
	b.mu.Unlock()
	var err error
	if len(out) > 0 {
		_, err = b.w.Write(out)
	}
	if cap(out) <= maxKeptBytes {
		b.mu.Lock()
		if b.out == nil { // a line held meanwhile keeps its own buffer
			b.out = out[:0]
		}
		b.mu.Unlock()
	}
	return err
}

// maxKeptBytes bounds the buffer a batch keeps between flushes: a burst
// of values does not stay allocated.
const maxKeptBytes = 64 << 10

// maxGroups bounds the groups a batch keeps between flushes.
const maxGroups = 1024

// appendLines renders a group: as many lines as its longest array needs (100
// values each). A group has at most MaxMetrics metrics: the catalog has
// fewer (a test of telemetry checks it). The JSON is written by hand:
// through encoding/json's maps it was a seventh of a request's CPU
// (BenchmarkFlush), and the document is only strings and numbers. A value
// JSON cannot hold (NaN, ±Inf) is left out.
func (g *group) appendLines(out []byte, ts int64, scratch *[2][]byte) []byte {
	for start := 0; ; start += MaxValues {
		defs, line := scratch[0][:0], scratch[1][:0]
		for _, s := range g.series {
			vs := finite(s.values[min(start, len(s.values)):min(len(s.values), start+MaxValues)])
			if len(vs) == 0 {
				continue
			}
			if len(defs) > 0 {
				defs = append(defs, ',')
			}
			defs = append(defs, s.def...)
			line = append(line, s.member...)
			if len(vs) == 1 {
				line = jsontext.AppendFloat(line, vs[0])
				continue
			}
			line = append(line, '[')
			for i, v := range vs {
				if i > 0 {
					line = append(line, ',')
				}
				line = jsontext.AppendFloat(line, v)
			}
			line = append(line, ']')
		}
		scratch[0], scratch[1] = defs, line
		if len(defs) == 0 {
			return out
		}
		out = append(out, `{"_aws":{"Timestamp":`...)
		out = strconv.AppendInt(out, ts, 10)
		out = append(out, g.head...)
		out = append(out, defs...)
		out = append(out, "]}]}"...)
		out = append(out, line...)
		out = append(out, g.tail...)
	}
}

func newGroup(k groupKey, n int, sets [][]string) *group {
	g := &group{key: k}
	h := append([]byte(nil), `,"CloudWatchMetrics":[{"Namespace":`...)
	h = jsontext.AppendString(h, telemetry.Namespace)
	h = append(h, `,"Dimensions":[`...)
	for i, set := range sets {
		if i > 0 {
			h = append(h, ',')
		}
		h = append(h, '[')
		for j, name := range set {
			if j > 0 {
				h = append(h, ',')
			}
			h = jsontext.AppendString(h, name)
		}
		h = append(h, ']')
	}
	g.head = append(h, `],"Metrics":[`...)
	var t []byte
	for i := range n {
		t = jsontext.AppendString(append(t, ','), k.names[i])
		t = jsontext.AppendString(append(t, ':'), k.values[i])
	}
	g.tail = append(t, '}', '\n')
	return g
}

func newSeries(name string, unit telemetry.Unit) *series {
	s := &series{name: name, unit: unit}
	d := append([]byte(nil), `{"Name":`...)
	d = jsontext.AppendString(d, name)
	d = append(d, `,"Unit":`...)
	d = jsontext.AppendString(d, string(unit))
	s.def = append(d, '}')
	s.member = append(jsontext.AppendString([]byte{','}, name), ':')
	return s
}

// finite returns vs without the values JSON cannot hold.
func finite(vs []float64) []float64 {
	for i, v := range vs {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			kept := slices.Clone(vs[:i])
			for _, v := range vs[i+1:] {
				if !math.IsNaN(v) && !math.IsInf(v, 0) {
					kept = append(kept, v)
				}
			}
			return kept
		}
	}
	return vs
}

// Flushing wraps a Lambda handler so that the batch is flushed when each
// invocation ends, whatever its outcome.
func Flushing[In, Out any](b *Batch, h func(context.Context, In) (Out, error)) func(context.Context, In) (Out, error) {
	return func(ctx context.Context, in In) (Out, error) {
		defer func() { _ = b.Flush() }()
		return h(ctx, in)
	}
}
