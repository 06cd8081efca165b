// Package notify renders an alert event for an endpoint of a vendor kind:
// a Slack Block Kit message or a PagerDuty Events API v2 event, built from
// the event's stored body at delivery time, so every kind of endpoint gets
// the same event and a webhook endpoint its very bytes. The formats are
// pinned in notify/vendorformat.
package notify

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/voiceops/opsapi/shared/voiceops"
)

// Body returns what an attempt to ep posts for the event whose stored body
// is body: body itself for a webhook endpoint (signed by the sender), else
// the vendor's message. consoleURL is the console's address
// (https://host/console/), "" for no links.
func Body(ep voiceops.WebhookEndpoint, body []byte, consoleURL string) ([]byte, error) {
	switch ep.Kind {
	case voiceops.EndpointSlack, voiceops.EndpointPagerDuty:
	default:
		return body, nil
	}
	var ev voiceops.EventBody
	if err := json.Unmarshal(body, &ev); err != nil {
		return nil, fmt.Errorf("notify: the event body is not an event: %w", err)
	}
	var msg any
	if ep.Kind == voiceops.EndpointSlack {
		msg = slackMessage(ev, ruleLink(consoleURL, ev))
	} else {
		msg = pagerDutyEvent(ep.RoutingKey, ev, consoleURL, ruleLink(consoleURL, ev))
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(msg); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// ruleLink is the console page of the event's rule; "" without a console
// or for a test event (its sample rule has no page).
func ruleLink(consoleURL string, ev voiceops.EventBody) string {
	if consoleURL == "" || ev.Test {
		return ""
	}
	return consoleURL + "#/rules/" + ev.Alert.ID
}

// firing reports whether the event says the rule fires.
func firing(ev voiceops.EventBody) bool { return ev.EventType == voiceops.EventTriggered }

// scope names what the rule watches.
func scope(ev voiceops.EventBody) string {
	if ev.Alert.ProjectID == nil {
		return "account-wide"
	}
	return "project " + *ev.Alert.ProjectID
}

// condition is "value 3 >= threshold 1 over 5m" (no value: no data).
func condition(ev voiceops.EventBody) string {
	v := "no data"
	if ev.Alert.CurrentValue != nil {
		v = strconv.FormatInt(*ev.Alert.CurrentValue, 10)
	}
	return fmt.Sprintf("value %s %s threshold %d over %s", v, ev.Alert.Operator, ev.Alert.ThresholdValue, ev.Alert.WindowDuration)
}

// summary is the one-line text of the event.
func summary(ev voiceops.EventBody) string {
	head := "Firing"
	if !firing(ev) {
		head = "Resolved"
	}
	if ev.Test {
		head = "Test: " + head
	}
	return fmt.Sprintf("%s: %s (%s, %s; %s)", head, ev.Alert.Name, ev.Alert.Metric, condition(ev), scope(ev))
}

// truncate cuts s to at most n characters, marking the cut.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// mrkdwnEscape escapes the three characters Slack's mrkdwn reserves
// (https://api.slack.com/reference/surfaces/formatting#escaping).
var mrkdwnEscape = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

type slackText struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type slackBlock struct {
	Type     string      `json:"type"`
	Text     *slackText  `json:"text,omitempty"`
	Fields   []slackText `json:"fields,omitempty"`
	Elements []slackText `json:"elements,omitempty"`
}

type slackMsg struct {
	Text   string       `json:"text"`
	Blocks []slackBlock `json:"blocks"`
}

func slackMessage(ev voiceops.EventBody, link string) slackMsg {
	head := "🔴 Firing: "
	if !firing(ev) {
		head = "✅ Resolved: "
	}
	if ev.Test {
		head = "Test event. " + head
	}
	field := func(name, value string) slackText {
		return slackText{"mrkdwn", "*" + name + "*\n" + mrkdwnEscape.Replace(value)}
	}
	state := fmt.Sprintf("%s (was %s)", ev.Alert.CurrentState, ev.Alert.PreviousState)
	blocks := []slackBlock{
		{Type: "header", Text: &slackText{"plain_text", truncate(head+ev.Alert.Name, 150)}},
		{Type: "section", Fields: []slackText{
			field("Rule", truncate(ev.Alert.Name, 1900)),
			field("State", state),
			field("Metric", string(ev.Alert.Metric)),
			field("Value vs threshold", condition(ev)),
			field("Scope", scope(ev)),
			field("At", ev.CreatedAt),
		}},
	}
	if link != "" {
		blocks = append(blocks, slackBlock{Type: "context", Elements: []slackText{
			{"mrkdwn", "<" + link + "|Open the rule in the console>"},
		}})
	}
	return slackMsg{Text: mrkdwnEscape.Replace(truncate(summary(ev), 3000)), Blocks: blocks}
}

type pdPayload struct {
	Summary       string         `json:"summary"`
	Source        string         `json:"source"`
	Severity      string         `json:"severity"`
	Timestamp     string         `json:"timestamp"`
	Component     string         `json:"component"`
	Group         string         `json:"group"`
	Class         string         `json:"class"`
	CustomDetails map[string]any `json:"custom_details"`
}

type pdLink struct {
	Href string `json:"href"`
	Text string `json:"text"`
}

type pdEvent struct {
	RoutingKey  string     `json:"routing_key"`
	EventAction string     `json:"event_action"`
	DedupKey    string     `json:"dedup_key"`
	Payload     *pdPayload `json:"payload,omitempty"`
	Links       []pdLink   `json:"links,omitempty"`
	Client      string     `json:"client,omitempty"`
	ClientURL   string     `json:"client_url,omitempty"`
}

// PagerDutyClient names the service in PagerDuty's incident.
const PagerDutyClient = "VoiceOps alerting"

// DedupKey is the PagerDuty dedup key of an event: one per firing of a
// rule, shared by its trigger and its resolve. A rule's events alternate
// (alerts.triggered with sequence n, then alerts.resolved with n+1: a
// resolve is sent only after the receivers were told the rule fired), so
// the firing is named by its trigger's sequence. Test events are alone.
func DedupKey(ev voiceops.EventBody) string {
	if ev.Test {
		return "voiceops:test:" + ev.EventID
	}
	seq := ev.Alert.Sequence
	if !firing(ev) {
		seq--
	}
	return "voiceops:" + ev.Alert.ID + ":" + strconv.FormatInt(seq, 10)
}

func pagerDutyEvent(routingKey string, ev voiceops.EventBody, consoleURL, link string) pdEvent {
	out := pdEvent{RoutingKey: routingKey, EventAction: "resolve", DedupKey: DedupKey(ev)}
	if firing(ev) {
		severity := "critical"
		if ev.Test {
			severity = "info"
		}
		group := "account-wide"
		if ev.Alert.ProjectID != nil {
			group = *ev.Alert.ProjectID
		}
		out.EventAction = "trigger"
		out.Payload = &pdPayload{
			Summary: truncate(summary(ev), 1024), Source: "voiceops " + scope(ev), Severity: severity,
			Timestamp: ev.CreatedAt, Component: string(ev.Alert.Metric), Group: group, Class: "alert_rule",
			CustomDetails: map[string]any{
				"rule_id": ev.Alert.ID, "rule_name": ev.Alert.Name, "metric": ev.Alert.Metric,
				"operator": ev.Alert.Operator, "threshold_value": ev.Alert.ThresholdValue,
				"current_value": ev.Alert.CurrentValue, "window_duration": ev.Alert.WindowDuration,
				"previous_state": ev.Alert.PreviousState, "current_state": ev.Alert.CurrentState,
				"project_id": ev.Alert.ProjectID, "event_id": ev.EventID, "test": ev.Test,
			},
		}
	}
	if link != "" {
		out.Links = []pdLink{{Href: link, Text: "The rule in the VoiceOps console"}}
	}
	if consoleURL != "" {
		out.Client, out.ClientURL = PagerDutyClient, consoleURL
	}
	return out
}
