//go:build stack

package main

import (
	"slices"
	"strings"
	"testing"
)

// No AccessDenied anywhere in the run: this file sorts last, so its test
// runs after every scenario (go test runs files and tests in order).
func TestZZNoAccessDenied(t *testing.T) {
	if d := st.Proxy.Denials(); len(d) > 0 {
		var lines []string
		for _, x := range d {
			lines = append(lines, x.String())
		}
		slices.Sort(lines)
		t.Fatalf("%d AWS calls refused by the template's policies:\n%s", len(d), strings.Join(slices.Compact(lines), "\n"))
	}
}

// After the scenarios, the runner has collected each kind of metric its
// alarms read: the functions' own (EMF lines in their logs) and the
// service metrics of Lambda, the stream mapping, SQS and API Gateway.
func TestZZMetricsCollected(t *testing.T) {
	for _, m := range [][2]string{
		{"VoiceOps", "Requests"}, {"VoiceOps", "EvaluationLag"}, {"VoiceOps", "DeliveryAttempts"},
		{"AWS/Lambda", "Invocations"}, {"AWS/Lambda", "Duration"}, {"AWS/Lambda", "IteratorAge"},
		{"AWS/SQS", "ApproximateNumberOfMessagesVisible"}, {"AWS/SQS", "ApproximateAgeOfOldestMessage"},
		{"AWS/ApiGateway", "Count"}, {"AWS/ApiGateway", "Latency"},
	} {
		if !st.monitor.store.Seen(m[0], m[1]) {
			t.Errorf("no datapoint of %s/%s in the whole run", m[0], m[1])
		}
	}
}
