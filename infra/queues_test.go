package main

import (
	"testing"
)

// sqsDefaultRetention is SQS's MessageRetentionPeriod when none is given.
const sqsDefaultRetention = 4 * 24 * 3600

// TestRedrivenQueuesKeepMessagesUntilTheyAreDeadLettered: in every stack,
// every queue with a redrive policy keeps a message longer than
// maxReceiveCount visibility timeouts, so a message that keeps failing is
// retried maxReceiveCount times and then moved to its dead-letter queue
// (whose alarm tells), instead of expiring unseen.
func TestRedrivenQueuesKeepMessagesUntilTheyAreDeadLettered(t *testing.T) {
	s := defaultSynth(t)
	n := 0
	for name, tmpl := range s.json {
		for id, res := range tmpl["Resources"].(map[string]any) {
			res := res.(map[string]any)
			if res["Type"] != "AWS::SQS::Queue" {
				continue
			}
			p := props(res)
			redrive, ok := p["RedrivePolicy"].(map[string]any)
			if !ok {
				continue
			}
			n++
			receives, _ := redrive["maxReceiveCount"].(float64)
			visibility, ok := p["VisibilityTimeout"].(float64)
			if !ok {
				visibility = 30 // SQS's default
			}
			retention, ok := p["MessageRetentionPeriod"].(float64)
			if !ok {
				retention = sqsDefaultRetention
			}
			if receives < 1 || retention <= visibility*receives {
				t.Errorf("%s %s: retention %vs, want more than %v receives × %vs visibility", name, id, retention, receives, visibility)
			}
		}
	}
	if n == 0 {
		t.Fatal("no queue with a redrive policy")
	}
}
