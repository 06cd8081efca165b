package main

import (
	"net/url"
	"testing"
)

// TestDevServerDemoData: with -demo-data the first account has the demo
// rules, a metric series with data, and a conversation that handed off.
func TestDevServerDemoData(t *testing.T) {
	creds, stop := startDev(t, "-demo-data")
	defer func() { _ = stop() }()
	acct := creds.Accounts[0]
	p := acct.Projects[0]
	rules := studioCall(t, creds.AgentStudioURL, "GET", "/v1/alert-rules", "x-api-key", acct.APIKey, "")["data"].([]any)
	if len(rules) != 3 {
		t.Fatalf("%d demo rules, want 3", len(rules))
	}
	q := url.Values{"metric": {"turn_latency_p95"}, "project_id": {p.ProjectID}, "step": {"15m"}}
	series := studioCall(t, creds.AgentStudioURL, "GET", "/v1/metrics?"+q.Encode(), "x-api-key", acct.APIKey, "")["data"].([]any)
	withData := 0
	for _, pt := range series {
		if pt.(map[string]any)["value"] != nil {
			withData++
		}
	}
	if withData < 6 {
		t.Errorf("%d steps of 15 minutes with data, want the last 100 minutes'", withData)
	}
	st, list := chatCall(t, creds.BaseURL, acct.APIKey, "", "GET", "/v3/"+acct.AccountID+"/"+p.ProjectID+"/conversations", "")
	convs, _ := list["conversations"].([]any)
	if st != 200 || len(convs) != 1 || convs[0].(map[string]any)["handoff"] != true {
		t.Errorf("conversations: %d %v, want one that handed off", st, list)
	}
}
