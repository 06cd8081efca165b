package prom_test

import (
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/voiceops/opsapi/shared/platform/telemetry"
	"github.com/voiceops/opsapi/shared/platform/telemetry/prom"
)

// The text format's lines (prometheus.io/docs/instrumenting/exposition_formats):
// comments, and samples "name{label="value",...} number".
var (
	helpLine   = regexp.MustCompile(`^# HELP [a-zA-Z_:][a-zA-Z0-9_:]* .*$`)
	typeLine   = regexp.MustCompile(`^# TYPE [a-zA-Z_:][a-zA-Z0-9_:]* (counter|gauge|summary|histogram|untyped)$`)
	sampleLine = regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*(\{[a-zA-Z_][a-zA-Z0-9_]*="(\\.|[^"\\])*"(,[a-zA-Z_][a-zA-Z0-9_]*="(\\.|[^"\\])*")*\})? -?[0-9.e+-]+$`)
)

// CheckExposition fails on any line that is not of the text format.
func checkExposition(tb testing.TB, text string) {
	tb.Helper()
	for _, l := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		if !helpLine.MatchString(l) && !typeLine.MatchString(l) && !sampleLine.MatchString(l) {
			tb.Errorf("not a line of the text format: %q", l)
		}
	}
}

func TestExposition(t *testing.T) {
	r := prom.New()
	r.Record(telemetry.Requests, 1, "studio", "GET /v1/alert-rules")
	r.Record(telemetry.Requests, 1, "studio", "GET /v1/alert-rules")
	r.Record(telemetry.Errors4xx, 1, "base", `GET /v1/"odd"\path`)
	r.Record(telemetry.Latency, 2.5, "studio", "GET /v1/alert-rules")
	r.Record(telemetry.Latency, 4, "studio", "GET /v1/alert-rules")
	r.Record(telemetry.IdleEnds, 3)
	rec := httptest.NewRecorder()
	r.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if ct := rec.Header().Get("Content-Type"); ct != prom.ContentType {
		t.Errorf("Content-Type %q", ct)
	}
	text := rec.Body.String()
	checkExposition(t, text)
	for _, want := range []string{
		"# TYPE voiceops_requests_total counter\n",
		`voiceops_requests_total{host="studio",route="GET /v1/alert-rules"} 2` + "\n",
		`voiceops_4xx_total{host="base",route="GET /v1/\"odd\"\\path"} 1` + "\n",
		"# TYPE voiceops_latency_milliseconds summary\n",
		`voiceops_latency_milliseconds_sum{host="studio",route="GET /v1/alert-rules"} 6.5` + "\n",
		`voiceops_latency_milliseconds_count{host="studio",route="GET /v1/alert-rules"} 2` + "\n",
		"voiceops_idle_ends_total 3\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("exposition lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "dials") {
		t.Errorf("a metric never recorded is listed:\n%s", text)
	}
}

func TestEveryCatalogNameIsValid(t *testing.T) {
	seen := map[string]bool{}
	for _, m := range telemetry.Catalog() {
		n := prom.Name(m)
		if !regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*$`).MatchString(n) || seen[n] {
			t.Errorf("%s: Prometheus name %q invalid or taken twice", m.Name, n)
		}
		seen[n] = true
	}
}
