package main

import (
	"encoding/json"
	"io"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"
)

// TestOutboundEndToEnd is the outbound calls' end-to-end check on the dev server with its
// defaults (the simulated provider, 1 call per second per account):
// +14155550100 goes queued, calling, success and its voice conversation
// (with turns) is in the v3 list; the test numbers end in failure with
// their reasons; 5 triggers at once start at least 3.5 s apart first to
// last. It takes about 10 s of wall time: the pacing is real.
func TestOutboundEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test takes about 10 seconds")
	}
	creds, stop := startDev(t)
	defer func() {
		if err := stop(); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	}()
	call := func(method, path, header, key, body string) (int, map[string]any) {
		t.Helper()
		req, _ := http.NewRequest(method, creds.BaseURL+path, strings.NewReader(body))
		req.Header.Set(header, key)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		var out map[string]any
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatalf("%s %s: %d %s", method, path, res.StatusCode, b)
		}
		return res.StatusCode, out
	}
	acct := creds.Accounts[0]
	proj := acct.Projects[0]
	trigger := func(skey, to, body string) string {
		t.Helper()
		code, out := call("POST", "/v1/outbound-calling/trigger", "X-Service-Auth-Token", skey, `{"to_number":"`+to+`"`+body+`}`)
		if code != 200 {
			t.Fatalf("trigger %s: %d %v", to, code, out)
		}
		return out["callSid"].(string)
	}
	status := func(skey, sid string) map[string]any {
		t.Helper()
		code, out := call("GET", "/v1/outbound-calling/"+sid+"/status", "X-Service-Auth-Token", skey, "")
		if code != 200 {
			t.Fatalf("status %s: %d %v", sid, code, out)
		}
		return out
	}
	// waitEnd polls as the base host recommends, noting every status seen.
	waitEnd := func(skey, sid string) (map[string]any, []string) {
		t.Helper()
		var seen []string
		deadline := time.Now().Add(20 * time.Second)
		for time.Now().Before(deadline) {
			st := status(skey, sid)
			if s := st["status"].(string); len(seen) == 0 || seen[len(seen)-1] != s {
				seen = append(seen, s)
			}
			if st["status"] == "success" || st["status"] == "failure" {
				return st, seen
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Fatalf("call %s not ended within 20 s; statuses %v", sid, seen)
		return nil, nil
	}

	ok := trigger(proj.ServiceAuthToken, "+14155550100", `,"metadata":{"first_name":"Ada"}`)
	if st := status(proj.ServiceAuthToken, ok); st["status"] != "queued" && st["status"] != "calling" {
		t.Errorf("just triggered: %v", st)
	}
	failing := map[string]string{}
	for _, n := range []string{"0001", "0002", "0003"} {
		failing[trigger(proj.ServiceAuthToken, "+1415555"+n, "")] = map[string]string{"0001": "busy", "0002": "no-answer", "0003": "failed"}[n]
	}
	end, seen := waitEnd(proj.ServiceAuthToken, ok)
	if end["status"] != "success" || end["reason"] != nil || seen[len(seen)-2] != "calling" {
		t.Errorf("+14155550100 ended %v after %v", end, seen)
	}
	for sid, reason := range failing {
		if end, _ := waitEnd(proj.ServiceAuthToken, sid); end["status"] != "failure" || end["reason"] != reason {
			t.Errorf("test number call ended %v, want failure %s", end, reason)
		}
	}

	// The answered call's voice conversation, in the v3 list.
	_, list := call("GET", "/v3/"+acct.AccountID+"/"+proj.ProjectID+"/conversations?limit=50", "x-api-key", proj.APIKey, "")
	var conv map[string]any
	for _, c := range list["conversations"].([]any) {
		if c := c.(map[string]any); c["to_number"] == "+14155550100" {
			conv = c
		}
	}
	if conv == nil {
		t.Fatalf("no conversation to +14155550100 in %v", list)
	}
	// (integration_attributes are not in the list: shared/calls/simulator's tests read them.)
	turns, _ := conv["turns"].([]any)
	if conv["channel"] != "voice" || conv["from_number"] != "+15005550006" || len(turns) < 2 || conv["in_progress"] != false {
		t.Errorf("the call's conversation: %v", conv)
	}

	// It counts in the concurrency series.
	from, to := time.Now().UTC().Add(-time.Hour).Format(time.RFC3339), time.Now().UTC().Add(10*time.Minute).Format(time.RFC3339)
	code, series := call("GET", "/v1/"+acct.AccountID+"/"+proj.ProjectID+"/conversations/concurrency?start_time="+from+"&end_time="+to, "x-api-key", proj.APIKey, "")
	peak := 0.0
	if code == 200 {
		for _, iv := range series["intervals"].([]any) {
			peak = max(peak, iv.(map[string]any)["max_concurrent_conversations"].(float64))
		}
	}
	if peak < 1 {
		t.Errorf("concurrency: %d, peak %v; want the call's conversation counted", code, peak)
	}

	// 5 triggers at once (another account): placed at its pace, 1 a second.
	acct2 := creds.Accounts[1].Projects[0]
	var sids []string
	for range 5 {
		sids = append(sids, trigger(acct2.ServiceAuthToken, "+14155550100", ""))
	}
	var placed []time.Time
	for _, sid := range sids {
		end, _ := waitEnd(acct2.ServiceAuthToken, sid)
		if end["status"] != "success" {
			t.Errorf("burst call ended %v", end)
		}
	}
	// When each went calling is when the dialer placed it: read from the
	// conversations' start (the simulator answers a fixed ring after).
	_, list2 := call("GET", "/v3/"+creds.Accounts[1].AccountID+"/"+acct2.ProjectID+"/conversations?limit=50", "x-api-key", acct2.APIKey, "")
	for _, c := range list2["conversations"].([]any) {
		at, err := time.Parse(time.RFC3339, c.(map[string]any)["started_at"].(string))
		if err != nil {
			t.Fatal(err)
		}
		placed = append(placed, at)
	}
	sort.Slice(placed, func(i, j int) bool { return placed[i].Before(placed[j]) })
	if len(placed) != 5 || placed[4].Sub(placed[0]) < 3500*time.Millisecond {
		t.Errorf("5 calls started over %v, want at least 3.5 s first to last: %v", placed[len(placed)-1].Sub(placed[0]), placed)
	}
}
