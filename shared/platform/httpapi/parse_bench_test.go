package httpapi

import "testing"

// BenchmarkParseObjectRule reads the create-rule body of
// shared/testsupport/apitest's BenchmarkCreateRule: the scanner with its repeated-key
// check (jsonkeys.go).
func BenchmarkParseObjectRule(b *testing.B) {
	body := []byte(`{"name":"p95 too slow","metric":"turn_latency_p95","operator":">","threshold_value":1500,"window_duration":"5m","project_id":"proj_a1"}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseObject(body); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseObjectNested is a body with nested objects (a webhook
// endpoint's headers, metadata), where every level is checked.
func BenchmarkParseObjectNested(b *testing.B) {
	body := []byte(`{"name":"pager","url":"https://hooks.example.com/alerts","event_types":["alerts.triggered","alerts.resolved"],"headers":{"Authorization":"Bearer my-receiver-token","X-A":"1","X-B":"2"},"metadata":{"a":{"b":[{"c":1,"d":2},{"c":3}]}}}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseObject(body); err != nil {
			b.Fatal(err)
		}
	}
}
