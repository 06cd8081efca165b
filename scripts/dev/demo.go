package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/voiceops/opsapi/shared/alerts/alerting"
	"github.com/voiceops/opsapi/shared/metrics"
	"github.com/voiceops/opsapi/shared/metrics/buckets"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// seedDemo gives the first demo account something for the console to show
// (-demo-data): three alert rules, the metric events of the last 100
// minutes (turn latencies every minute, a burst of API errors half an hour
// ago, function errors now and then), and a chat conversation that hands
// off. An account that already has rules is left as it is, so a restart
// with the same credentials does not add them twice.
func seedDemo(ctx context.Context, api http.Handler, creds Credentials, svc *alerting.Service, rec *buckets.Recorder, now time.Time) error {
	acct := creds.Accounts[0]
	p0, p1 := acct.Projects[0], acct.Projects[1]
	rules, err := svc.Rules.ListRules(ctx, acct.AccountID)
	if err != nil || len(rules) > 0 {
		return err
	}
	for _, in := range []voiceops.RuleInput{
		{Name: "API errors", ProjectID: &p0.ProjectID, Metric: voiceops.MetricAPIErrors, Operator: voiceops.OpGreaterEqual, Threshold: 3, Window: voiceops.Window5m},
		{Name: "Slow turns (p95)", Metric: voiceops.MetricTurnLatencyP95, Operator: voiceops.OpGreater, Threshold: 1500, Window: voiceops.Window10m},
		{Name: "Function errors", ProjectID: &p1.ProjectID, Metric: voiceops.MetricFunctionErrors, Operator: voiceops.OpGreater, Threshold: 2, Window: voiceops.Window60m},
	} {
		if _, err := svc.CreateRule(ctx, acct.AccountID, in.Patch()); err != nil {
			return fmt.Errorf("demo rule %q: %w", in.Name, err)
		}
	}
	var events []metrics.Event
	start := now.Add(-100 * time.Minute).Truncate(time.Minute)
	for i := 0; start.Add(time.Duration(i) * time.Minute).Before(now); i++ {
		at := start.Add(time.Duration(i)*time.Minute + 30*time.Second)
		if at.After(now) {
			break
		}
		for k, ms := range []float64{420, 610, 880, 1200 + float64(i%7)*150} {
			p := p0.ProjectID
			if k%2 == 1 {
				p = p1.ProjectID
			}
			events = append(events, metrics.Event{AccountID: acct.AccountID, ProjectID: p, Kind: metrics.TurnLatency, Value: ms, At: at})
		}
		if i >= 60 && i < 66 { // a burst of API errors, 40 to 34 minutes ago
			for range 2 {
				events = append(events, metrics.Count(metrics.APIErrors, acct.AccountID, p0.ProjectID, at))
			}
		}
		if i%17 == 0 {
			events = append(events, metrics.Count(metrics.FunctionErrors, acct.AccountID, p1.ProjectID, at))
		}
	}
	if err := rec.Record(ctx, events...); err != nil {
		return fmt.Errorf("demo metric events: %w", err)
	}
	// A chat conversation through the API, as a client would have it.
	// The API is called in process: the server answers requests only once
	// the credentials are written, after this.
	base := "/v1/" + acct.AccountID + "/" + p0.ProjectID + "/chat/"
	post := func(path, body string) (string, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+path, strings.NewReader(body))
		req.Header.Set("X-API-KEY", p0.APIKey)
		req.Header.Set("X-TOKEN", p0.AgentToken)
		req.Header.Set("Content-Type", "application/json")
		res := httptest.NewRecorder()
		api.ServeHTTP(res, req)
		if res.Code != http.StatusOK {
			return "", fmt.Errorf("demo chat %s: %d %s", path, res.Code, res.Body.String())
		}
		return res.Body.String(), nil
	}
	created, err := post("create", `{"channel":"webchat"}`)
	if err != nil {
		return err
	}
	id := between(created, `"conversation_id":"`, `"`)
	for _, msg := range []string{"What is my balance?", "I need a human"} {
		if _, err := post("respond", `{"conversation_id":"`+id+`","message":"`+msg+`"}`); err != nil {
			return err
		}
	}
	return nil
}

func between(s, from, to string) string {
	_, rest, _ := strings.Cut(s, from)
	v, _, _ := strings.Cut(rest, to)
	return v
}
