// Package prom keeps the telemetry catalog's metrics in memory and serves
// them in Prometheus's text exposition format (version 0.0.4), so that the
// dev server shows at /metrics what a deployed stack puts in CloudWatch:
// counts as counters (name_total), durations as summaries without
// quantiles (name_sum and name_count). Only the dev server links it.
package prom

import (
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"

	"github.com/voiceops/opsapi/shared/platform/telemetry"
)

// ContentType is the text format's media type.
const ContentType = "text/plain; version=0.0.4; charset=utf-8"

// Registry is a telemetry.Recorder that keeps every series. It is safe for
// concurrent use.
type Registry struct {
	mu     sync.Mutex
	series map[string]map[string]*value // metric name → label text → value
}

type value struct {
	sum   float64
	count uint64
}

// New returns an empty registry.
func New() *Registry { return &Registry{series: map[string]map[string]*value{}} }

// Record implements telemetry.Recorder.
func (r *Registry) Record(m telemetry.Metric, v float64, dims ...string) {
	// The labels are rendered on the stack and looked up as string(labels),
	// which does not allocate: only a new series keeps a copy.
	var buf [256]byte
	labels := appendLabels(buf[:0], m.Dims, dims)
	r.mu.Lock()
	defer r.mu.Unlock()
	byLabels := r.series[m.Name]
	if byLabels == nil {
		byLabels = map[string]*value{}
		r.series[m.Name] = byLabels
	}
	val := byLabels[string(labels)]
	if val == nil {
		val = &value{}
		byLabels[string(labels)] = val
	}
	val.sum += v
	val.count++
}

// labelText renders {name="value",...} with the format's escaping.
func labelText(names, values []string) string {
	return string(appendLabels(nil, names, values))
}

// appendLabels appends labelText's rendering to b.
func appendLabels(b []byte, names, values []string) []byte {
	if len(names) == 0 || len(values) == 0 {
		return b
	}
	b = append(b, '{')
	for i := range min(len(names), len(values)) {
		if i > 0 {
			b = append(b, ',')
		}
		for _, c := range []byte(names[i]) { // ASCII dimension names, lowered
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			b = append(b, c)
		}
		b = append(b, '=', '"')
		b = appendEscaped(b, values[i])
		b = append(b, '"')
	}
	return append(b, '}')
}

// appendEscaped appends s with the label value escaping of the text
// format: backslash, double quote and line feed.
func appendEscaped(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\':
			b = append(b, '\\', '\\')
		case '"':
			b = append(b, '\\', '"')
		case '\n':
			b = append(b, '\\', 'n')
		default:
			b = append(b, c)
		}
	}
	return b
}

// Name is a metric's Prometheus name: voiceops_ and the snake-case name,
// with the unit's suffix.
func Name(m telemetry.Metric) string {
	var b strings.Builder
	b.WriteString("voiceops_")
	prevLower := false
	for _, r := range m.Name {
		if unicode.IsUpper(r) && prevLower {
			b.WriteByte('_')
		}
		b.WriteRune(unicode.ToLower(r))
		prevLower = unicode.IsLower(r) || unicode.IsDigit(r)
	}
	if m.Unit == telemetry.Count {
		b.WriteString("_total")
	} else {
		b.WriteString("_milliseconds")
	}
	return b.String()
}

// Write writes every metric of the catalog that has a series.
func (r *Registry) Write(w io.Writer) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	var b strings.Builder
	for _, m := range telemetry.Catalog() {
		byLabels := r.series[m.Name]
		if len(byLabels) == 0 {
			continue
		}
		name := Name(m)
		typ := "counter"
		if m.Unit != telemetry.Count {
			typ = "summary"
		}
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s %s\n", name, escapeHelp(m.Help), name, typ)
		labels := make([]string, 0, len(byLabels))
		for l := range byLabels {
			labels = append(labels, l)
		}
		slices.Sort(labels)
		for _, l := range labels {
			v := byLabels[l]
			if typ == "counter" {
				fmt.Fprintf(&b, "%s%s %s\n", name, l, num(v.sum))
				continue
			}
			fmt.Fprintf(&b, "%s_sum%s %s\n%s_count%s %d\n", name, l, num(v.sum), name, l, v.count)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

var helpEscaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`)

func escapeHelp(s string) string { return helpEscaper.Replace(s) }

func num(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// ServeHTTP serves the exposition (GET /metrics).
func (r *Registry) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", ContentType)
	_ = r.Write(w)
}
