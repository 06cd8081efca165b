package apispec

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/voiceops/opsapi/shared/metrics"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// TestMetricEnumsAreTheKindTable: the document is a checked-in file, so
// its lists of metric kinds and rule metrics are checked here against the
// one table (voiceops' metric.go): the intake's kinds, the rule metrics,
// which kinds take a latency and which a count (and their bounds), and
// that the descriptions name every one. Any other enum naming a kind is
// an unchecked copy, and fails.
func TestMetricEnumsAreTheKindTable(t *testing.T) {
	var doc map[string]any
	if err := json.Unmarshal(Document(), &doc); err != nil {
		t.Fatal(err)
	}
	schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
	schema := func(name string) map[string]any {
		s, ok := schemas[name].(map[string]any)
		if !ok {
			t.Fatalf("components.schemas.%s: missing", name)
		}
		return s
	}
	var kinds, counts, latencies, ruleMetrics []string
	for _, d := range voiceops.MetricKindDefs() {
		kinds = append(kinds, string(d.Kind))
		switch d.Value {
		case voiceops.ValueCount:
			counts = append(counts, string(d.Kind))
		case voiceops.ValueLatency:
			latencies = append(latencies, string(d.Kind))
		}
	}
	for _, m := range voiceops.Metrics {
		ruleMetrics = append(ruleMetrics, string(m))
	}
	checkEnum := func(where string, s map[string]any, want []string) {
		t.Helper()
		if got := strs(s["enum"]); !slices.Equal(got, want) {
			t.Errorf("%s enum %v, want %v (the kinds' table, voiceops/metric.go)", where, got, want)
		}
		desc, _ := s["description"].(string)
		for _, w := range want {
			if !strings.Contains(desc, "`"+w+"`") {
				t.Errorf("%s: the description does not name `%s`", where, w)
			}
		}
	}
	checkEnum("Metric", schema("Metric"), ruleMetrics)
	checkEnum("IntakeMetric", schema("IntakeMetric"), kinds)

	// MetricEvent says per kind what "value" is: one if/then per value type.
	byType := map[string][]string{}
	for i, c := range schema("MetricEvent")["allOf"].([]any) {
		branch := c.(map[string]any)
		metric := branch["if"].(map[string]any)["properties"].(map[string]any)["metric"].(map[string]any)
		names := strs(metric["enum"])
		if v, ok := metric["const"].(string); ok {
			names = []string{v}
		}
		value := branch["then"].(map[string]any)["properties"].(map[string]any)["value"].(map[string]any)
		typ, _ := value["type"].(string)
		byType[typ] = append(byType[typ], names...)
		switch typ {
		case "number":
			if value["minimum"] != 0.0 || value["maximum"] != float64(metrics.MaxLatencyMS) || !slices.Contains(strs(branch["then"].(map[string]any)["required"]), "value") {
				t.Errorf("MetricEvent.allOf[%d]: a latency's value is required, from 0 to %d", i, metrics.MaxLatencyMS)
			}
		case "integer":
			if value["minimum"] != 0.0 || value["maximum"] != float64(metrics.MaxCount) || value["default"] != 1.0 {
				t.Errorf("MetricEvent.allOf[%d]: a count's value is from 0 to %d, default 1", i, metrics.MaxCount)
			}
		default:
			t.Errorf("MetricEvent.allOf[%d]: value type %q", i, typ)
		}
	}
	if !slices.Equal(byType["number"], latencies) {
		t.Errorf("MetricEvent: the kinds whose value is a latency are %v, want %v", byType["number"], latencies)
	}
	if !slices.Equal(byType["integer"], counts) {
		t.Errorf("MetricEvent: the kinds whose value is a count are %v, want %v", byType["integer"], counts)
	}

	// No other enum lists kinds or rule metrics (they would go unchecked).
	checked := map[string]bool{"/components/schemas/Metric": true, "/components/schemas/IntakeMetric": true}
	walkEnums(doc, "", func(path string, enum []string) {
		if checked[path] || strings.HasPrefix(path, "/components/schemas/MetricEvent/allOf/") {
			return
		}
		for _, v := range enum {
			if slices.Contains(kinds, v) || slices.Contains(ruleMetrics, v) {
				t.Errorf("%s: an enum of metrics (%v) that this test does not check: use a $ref to Metric or IntakeMetric", path, enum)
				return
			}
		}
	})
}

// TestMetricEventPerKind validates an event of every kind against the
// document's MetricEvent: what the intake takes (metrics.Event.Problems)
// the document takes, and what it refuses for the kind's value type the
// document refuses.
func TestMetricEventPerKind(t *testing.T) {
	doc, err := load()
	if err != nil {
		t.Fatal(err)
	}
	s := doc.Components.Schemas["MetricEvent"].Value
	visit := func(body string) error {
		var v any
		if err := json.Unmarshal([]byte(body), &v); err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		return s.VisitJSON(v, openapi3.EnableJSONSchema2020())
	}
	for _, d := range voiceops.MetricKindDefs() {
		event := func(value string) string {
			if value == "" {
				return fmt.Sprintf(`{"account_id": "acct_a", "metric": %q}`, d.Kind)
			}
			return fmt.Sprintf(`{"account_id": "acct_a", "metric": %q, "value": %s}`, d.Kind, value)
		}
		var good, bad []string
		switch d.Value {
		case voiceops.ValueCount:
			good, bad = []string{"", "0", "5"}, []string{"1.5", `"5"`, "-1"}
		case voiceops.ValueLatency:
			good, bad = []string{"0", "412.5"}, []string{"", `"5"`, "-1", "86400001"}
		case voiceops.ValueIgnored:
			good = []string{"", "null", `"anything"`}
		}
		for _, v := range good {
			if err := visit(event(v)); err != nil {
				t.Errorf("%s: the document refuses %s: %v", d.Kind, event(v), err)
			}
		}
		for _, v := range bad {
			if err := visit(event(v)); err == nil {
				t.Errorf("%s: the document accepts %s", d.Kind, event(v))
			}
		}
	}
	if err := visit(`{"account_id": "acct_a", "metric": "cpu"}`); err == nil {
		t.Error(`the document accepts the metric "cpu"`)
	}
}

func strs(v any) []string {
	var out []string
	for _, x := range asSlice(v) {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func asSlice(v any) []any { s, _ := v.([]any); return s }

// walkEnums calls f with every enum of strings in the document, and the
// JSON pointer of the schema holding it.
func walkEnums(v any, path string, f func(path string, enum []string)) {
	switch v := v.(type) {
	case map[string]any:
		if e := strs(v["enum"]); len(e) > 0 {
			f(path, e)
		}
		for k, x := range v {
			walkEnums(x, path+"/"+k, f)
		}
	case []any:
		for i, x := range v {
			walkEnums(x, fmt.Sprintf("%s/%d", path, i), f)
		}
	}
}
