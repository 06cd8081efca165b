package emf_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/platform/telemetry"
	"github.com/voiceops/opsapi/shared/platform/telemetry/emf"
)

func lines(tb testing.TB, buf *bytes.Buffer) []map[string]any {
	tb.Helper()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		if l == "" {
			continue
		}
		if err := emf.Validate([]byte(l)); err != nil {
			tb.Fatalf("line %s: %v", l, err)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			tb.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

func TestBatchSumsCountsAndKeepsLatencies(t *testing.T) {
	var buf bytes.Buffer
	at := time.UnixMilli(1_790_000_000_123)
	b := emf.New(&buf, func() time.Time { return at })
	for range 3 {
		b.Record(telemetry.Requests, 1, "studio", "GET /v1/alert-rules")
		b.Record(telemetry.Latency, 12, "studio", "GET /v1/alert-rules")
	}
	b.Record(telemetry.Errors5xx, 1, "base", "POST /v1/x")
	b.Record(telemetry.RetriesScheduled, 1)
	if err := b.Flush(); err != nil {
		t.Fatal(err)
	}
	got := lines(t, &buf)
	if len(got) != 3 {
		t.Fatalf("%d lines, want 3 (one per dimension values): %s", len(got), buf.String())
	}
	first := got[0]
	if first["Requests"] != 3.0 || first["Host"] != "studio" || first["Route"] != "GET /v1/alert-rules" {
		t.Errorf("first line %v: want Requests 3 for studio GET /v1/alert-rules", first)
	}
	if lat, _ := first["Latency"].([]any); len(lat) != 3 {
		t.Errorf("Latency %v: want the 3 values", first["Latency"])
	}
	awsMeta := first["_aws"].(map[string]any)
	if awsMeta["Timestamp"] != float64(at.UnixMilli()) {
		t.Errorf("Timestamp %v, want %d", awsMeta["Timestamp"], at.UnixMilli())
	}
	d := awsMeta["CloudWatchMetrics"].([]any)[0].(map[string]any)
	if d["Namespace"] != telemetry.Namespace {
		t.Errorf("Namespace %v", d["Namespace"])
	}
	if dims, _ := json.Marshal(d["Dimensions"]); string(dims) != `[["Host"],["Host","Route"]]` {
		t.Errorf("Dimensions %s", dims)
	}
	if dims, _ := json.Marshal(got[2]["_aws"].(map[string]any)["CloudWatchMetrics"].([]any)[0].(map[string]any)["Dimensions"]); string(dims) != `[[]]` {
		t.Errorf("a metric without dimensions: Dimensions %s, want [[]]", dims)
	}
	buf.Reset()
	if err := b.Flush(); err != nil || buf.Len() != 0 {
		t.Errorf("a second flush wrote %q (%v); want nothing", buf.String(), err)
	}
}

func TestBatchSplitsLongArrays(t *testing.T) {
	var buf bytes.Buffer
	b := emf.New(&buf, nil)
	for i := range 250 {
		b.Record(telemetry.DeliveryLatency, float64(i), "delivered")
	}
	b.Record(telemetry.DeliveryAttempts, 250, "delivered")
	if err := b.Flush(); err != nil {
		t.Fatal(err)
	}
	got := lines(t, &buf)
	if len(got) != 3+1 {
		t.Fatalf("%d lines, want 4 (250 latencies in 3 lines; the count in its own group): %s", len(got), buf.String())
	}
	n := 0
	for _, l := range got {
		if vs, ok := l["DeliveryLatency"].([]any); ok {
			n += len(vs)
		}
	}
	if n != 250 {
		t.Errorf("%d latency values written, want 250", n)
	}
}

func TestValidateRefuses(t *testing.T) {
	ok := `{"_aws":{"Timestamp":1790000000000,"CloudWatchMetrics":[{"Namespace":"N","Dimensions":[["Host"]],"Metrics":[{"Name":"M","Unit":"Count"}]}]},"Host":"h","M":1}`
	if err := emf.Validate([]byte(ok)); err != nil {
		t.Fatalf("a valid line: %v", err)
	}
	many := make([]string, 101)
	for i := range many {
		many[i] = `{"Name":"M","Unit":"Count"}`
	}
	dims := make([]string, 31)
	for i := range dims {
		dims[i] = `"Host"`
	}
	for name, line := range map[string]string{
		"not JSON":          `nope`,
		"no _aws":           `{"M":1}`,
		"no timestamp":      `{"_aws":{"CloudWatchMetrics":[]},"M":1}`,
		"no namespace":      `{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Dimensions":[],"Metrics":[{"Name":"M"}]}]},"M":1}`,
		"unknown unit":      strings.Replace(ok, `"Count"`, `"Requests"`, 1),
		"dimension missing": strings.Replace(ok, `"Host":"h",`, ``, 1),
		"metric missing":    strings.Replace(ok, `,"M":1`, ``, 1),
		"metric a string":   strings.Replace(ok, `"M":1`, `"M":"1"`, 1),
		"101 metrics":       strings.Replace(ok, `[{"Name":"M","Unit":"Count"}]`, "["+strings.Join(many, ",")+"]", 1),
		"31 dimensions":     strings.Replace(ok, `[["Host"]]`, "[["+strings.Join(dims, ",")+"]]", 1),
		"101 values":        strings.Replace(ok, `"M":1`, `"M":[`+strings.Repeat("1,", 100)+`1]`, 1),
	} {
		if err := emf.Validate([]byte(line)); err == nil {
			t.Errorf("%s: Validate accepted %s", name, line)
		}
	}
}

func TestFlushingFlushesEachInvocation(t *testing.T) {
	var buf bytes.Buffer
	b := emf.New(&buf, nil)
	h := emf.Flushing(b, func(ctx context.Context, n int) (int, error) {
		b.Record(telemetry.IdleEnds, float64(n))
		return n, nil
	})
	for i := 1; i <= 2; i++ {
		if _, err := h(context.Background(), i); err != nil {
			t.Fatal(err)
		}
	}
	got := lines(t, &buf)
	if len(got) != 2 || got[0]["IdleEnds"] != 1.0 || got[1]["IdleEnds"] != 2.0 {
		t.Errorf("lines %v: want one per invocation, IdleEnds 1 then 2", got)
	}
}

// TestLinesEscapeAndSkip checks the hand-written JSON: dimension values
// with quotes, backslashes, control characters, other scripts and invalid
// UTF-8 come back as written (U+FFFD for the invalid byte), and values
// JSON cannot hold are left out rather than spoiling the line.
func TestLinesEscapeAndSkip(t *testing.T) {
	var buf bytes.Buffer
	b := emf.New(&buf, nil)
	odd := "a\"b\\c\n\td\x01é漢\xffz"
	b.Record(telemetry.Requests, 1, "studio", odd)
	b.Record(telemetry.Latency, 1.5e-7, "studio", odd)
	b.Record(telemetry.Latency, math.NaN(), "studio", odd)
	b.Record(telemetry.Latency, 2e21, "studio", odd)
	b.Record(telemetry.Latency, math.Inf(1), "base", "GET /x") // its only value: no metric, no line
	if err := b.Flush(); err != nil {
		t.Fatal(err)
	}
	got := lines(t, &buf)
	if len(got) != 1 {
		t.Fatalf("%d lines, want 1: %s", len(got), buf.String())
	}
	if want := strings.ToValidUTF8(odd, "\uFFFD"); got[0]["Route"] != want {
		t.Errorf("Route %q, want %q", got[0]["Route"], want)
	}
	if lat, _ := got[0]["Latency"].([]any); len(lat) != 2 || lat[0] != 1.5e-7 || lat[1] != 2e21 {
		t.Errorf("Latency %v, want [1.5e-7 2e21]", got[0]["Latency"])
	}
	if got[0]["Requests"] != 1.0 {
		t.Errorf("Requests %v, want 1", got[0]["Requests"])
	}
}

// BenchmarkFlush is one request's metrics (a route's count and latency,
// the store's calls), recorded and flushed, as a function does after
// each invocation.
func BenchmarkFlush(b *testing.B) {
	bt := emf.New(io.Discard, nil)
	b.ReportAllocs()
	for b.Loop() {
		bt.Record(telemetry.Requests, 1, "studio", "POST /v1/alert-rules")
		bt.Record(telemetry.Latency, 1.25, "studio", "POST /v1/alert-rules")
		bt.Record(telemetry.Errors5xx, 0, "studio", "POST /v1/alert-rules")
		if err := bt.Flush(); err != nil {
			b.Fatal(err)
		}
	}
}

// writeLog counts the writes made to it and keeps what they wrote; hold,
// when set, runs inside a write (a line held while a flush writes).
type writeLog struct {
	writes []string
	hold   func()
}

func (w *writeLog) Write(p []byte) (int, error) {
	w.writes = append(w.writes, string(p))
	if h := w.hold; h != nil {
		w.hold = nil
		h()
	}
	return len(p), nil
}

// TestHeldLinesLeaveWithTheFlush: lines written to Held go out at the next
// flush, before the metric lines, in its one write; a line held while a
// flush writes goes out with the next one; a flush with only held lines
// writes them.
func TestHeldLinesLeaveWithTheFlush(t *testing.T) {
	var out writeLog
	b := emf.New(&out, time.Now)
	held := b.Held()
	m := telemetry.Metric{Name: "Requests", Unit: telemetry.Count}
	_, _ = io.WriteString(held, "{\"msg\":\"request\",\"n\":1}\n")
	b.Record(m, 1)
	if len(out.writes) != 0 {
		t.Fatalf("held lines written before the flush: %q", out.writes)
	}
	out.hold = func() { _, _ = io.WriteString(held, "{\"msg\":\"request\",\"n\":2}\n") }
	if err := b.Flush(); err != nil {
		t.Fatal(err)
	}
	if len(out.writes) != 1 || !strings.HasPrefix(out.writes[0], "{\"msg\":\"request\",\"n\":1}\n{\"_aws\":") || strings.Contains(out.writes[0], "\"n\":2") {
		t.Fatalf("first flush wrote %q: want the first held line, then the metric line, in one write", out.writes)
	}
	if err := b.Flush(); err != nil {
		t.Fatal(err)
	}
	if len(out.writes) != 2 || out.writes[1] != "{\"msg\":\"request\",\"n\":2}\n" {
		t.Fatalf("second flush wrote %q: want the line held during the first", out.writes[1:])
	}
	if err := b.Flush(); err != nil || len(out.writes) != 2 {
		t.Fatalf("an empty flush wrote %q (%v)", out.writes[2:], err)
	}
}
