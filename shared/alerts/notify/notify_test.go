package notify_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/alerts/notify"
	"github.com/voiceops/opsapi/shared/alerts/notify/vendorformat"
	"github.com/voiceops/opsapi/shared/voiceops"
)

const console = "https://studio.example.com/console/"

var at = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

func rule(name string) voiceops.AlertRule {
	project, v := "proj_1", int64(3)
	return voiceops.AlertRule{ID: "ar_1", AccountID: "acct_1", Name: name, ProjectID: &project, Metric: voiceops.Metric("api_errors"),
		Operator: voiceops.OpGreaterEqual, Threshold: 1, Window: voiceops.Window5m, Enabled: true, State: voiceops.StateOK, CurrentValue: &v}
}

// firing returns the events of one firing of r: its trigger and its
// resolve, made as the evaluator makes them.
func firing(r voiceops.AlertRule) (trigger, resolve voiceops.AlertEvent) {
	r.State = voiceops.StateAlert
	trigger = *voiceops.TransitionEvent(voiceops.StateOK, &r, at)
	r.State = voiceops.StateOK
	resolve = *voiceops.TransitionEvent(voiceops.StateAlert, &r, at.Add(time.Minute))
	return trigger, resolve
}

func body(t *testing.T, ep voiceops.WebhookEndpoint, ev voiceops.AlertEvent) []byte {
	t.Helper()
	b, err := notify.Body(ep, ev.Body, console)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var (
	slack     = voiceops.WebhookEndpoint{Kind: voiceops.EndpointSlack}
	pagerduty = voiceops.WebhookEndpoint{Kind: voiceops.EndpointPagerDuty, RoutingKey: "R0123456789ABCDEF0123456789abcde"}
)

func TestWebhookBodyIsTheEventBody(t *testing.T) {
	trigger, _ := firing(rule("Errors"))
	for _, kind := range []voiceops.EndpointKind{voiceops.EndpointWebhook, ""} {
		if got := body(t, voiceops.WebhookEndpoint{Kind: kind}, trigger); string(got) != string(trigger.Body) {
			t.Errorf("kind %q: body %s, want the event's bytes %s", kind, got, trigger.Body)
		}
	}
}

func TestSlackMessage(t *testing.T) {
	// A name with mrkdwn's reserved characters, longer than a header.
	name := "p95 > 1500 & <rising> " + strings.Repeat("x", 200)
	trigger, resolve := firing(rule(name))
	for _, c := range []struct {
		ev   voiceops.AlertEvent
		head string
	}{{trigger, "Firing: "}, {resolve, "Resolved: "}} {
		b := body(t, slack, c.ev)
		if err := vendorformat.ValidateSlack(b); err != nil {
			t.Fatalf("%s: %v\n%s", c.head, err, b)
		}
		var m vendorformat.SlackMessage
		_ = json.Unmarshal(b, &m)
		if !strings.Contains(m.Blocks[0].Text.Text, c.head) || !strings.HasPrefix(m.Text, c.head) {
			t.Errorf("%s: header %q, text %q", c.head, m.Blocks[0].Text.Text, m.Text)
		}
		all := string(b)
		for _, want := range []string{"api_errors", "value 3 &gt;= threshold 1 over 5m", "project proj_1",
			"&amp; &lt;rising&gt;", "<" + console + "#/rules/ar_1|"} {
			if !strings.Contains(all, want) {
				t.Errorf("%s: message lacks %q: %s", c.head, want, all)
			}
		}
		mrkdwn := m.Text // the fallback text is mrkdwn too; the header is plain_text
		for _, f := range m.Blocks[1].Fields {
			mrkdwn += f.Text
		}
		if strings.Contains(mrkdwn, "<rising>") || !strings.Contains(m.Blocks[0].Text.Text, "<rising>") {
			t.Errorf("%s: the rule's name reached mrkdwn unescaped, or plain_text escaped", c.head)
		}
	}
}

func TestPagerDutyTriggerAndResolveShareTheDedupKey(t *testing.T) {
	trigger, resolve := firing(rule("Errors"))
	var events []vendorformat.PagerDutyEvent
	for _, ev := range []voiceops.AlertEvent{trigger, resolve} {
		e, err := vendorformat.ValidatePagerDuty(body(t, pagerduty, ev))
		if err != nil {
			t.Fatal(err)
		}
		events = append(events, e)
	}
	tr, rs := events[0], events[1]
	if tr.EventAction != "trigger" || rs.EventAction != "resolve" {
		t.Errorf("actions %q, %q", tr.EventAction, rs.EventAction)
	}
	if tr.DedupKey == "" || tr.DedupKey != rs.DedupKey {
		t.Errorf("dedup keys %q and %q, want one shared key", tr.DedupKey, rs.DedupKey)
	}
	if tr.RoutingKey != pagerduty.RoutingKey || rs.RoutingKey != pagerduty.RoutingKey {
		t.Errorf("routing keys %q, %q", tr.RoutingKey, rs.RoutingKey)
	}
	p := tr.Payload
	if p.Severity != "critical" || p.Source == "" || p.Timestamp != "2026-11-22T10:00:00.000Z" || p.CustomDetails["rule_id"] != "ar_1" ||
		p.CustomDetails["current_value"] != float64(3) || !strings.Contains(p.Summary, "Firing: Errors") {
		t.Errorf("payload %+v", p)
	}
	if len(tr.Links) != 1 || tr.Links[0].Href != console+"#/rules/ar_1" || tr.ClientURL != console {
		t.Errorf("links %+v, client_url %q", tr.Links, tr.ClientURL)
	}
}

func TestPagerDutyNextFiringHasANewDedupKey(t *testing.T) {
	r := rule("Errors")
	r.Sequence = 2 // fired and resolved once already
	trigger, resolve := firing(r)
	first, _ := firing(rule("Errors"))
	k1, k2 := notifyKey(t, first), notifyKey(t, trigger)
	if k1 == k2 || notifyKey(t, resolve) != k2 {
		t.Errorf("first firing %q, second %q (its resolve %q): want a new key per firing", k1, k2, notifyKey(t, resolve))
	}
}

func notifyKey(t *testing.T, ev voiceops.AlertEvent) string {
	t.Helper()
	e, err := vendorformat.ValidatePagerDuty(body(t, pagerduty, ev))
	if err != nil {
		t.Fatal(err)
	}
	return e.DedupKey
}

func TestTestEventsAreValidToo(t *testing.T) {
	r := rule("Test alert")
	r.State = voiceops.StateAlert
	ev := voiceops.NewAlertEvent(voiceops.EventTriggered, r, voiceops.StateOK, at, true)
	if err := vendorformat.ValidateSlack(body(t, slack, ev)); err != nil {
		t.Error(err)
	}
	e, err := vendorformat.ValidatePagerDuty(body(t, pagerduty, ev))
	if err != nil || e.Payload.Severity != "info" || !strings.HasPrefix(e.DedupKey, "voiceops:test:") || len(e.Links) != 0 {
		t.Errorf("test event %+v: %v", e, err)
	}
}

func TestWithoutAConsoleNoLinks(t *testing.T) {
	trigger, _ := firing(rule("Errors"))
	b, err := notify.Body(pagerduty, trigger.Body, "")
	if err != nil {
		t.Fatal(err)
	}
	e, err := vendorformat.ValidatePagerDuty(b)
	if err != nil || len(e.Links) != 0 || e.ClientURL != "" {
		t.Errorf("%+v: %v", e, err)
	}
	s, _ := notify.Body(slack, trigger.Body, "")
	if err := vendorformat.ValidateSlack(s); err != nil || strings.Contains(string(s), "console") {
		t.Errorf("%s: %v", s, err)
	}
}

func TestBodyThatIsNoEventFails(t *testing.T) {
	if _, err := notify.Body(slack, []byte("not json"), console); err == nil {
		t.Error("no error for a body that is no event")
	}
}
