// Package vendorformat pins the formats Slack and PagerDuty publish for
// what they receive, as Go structs decoded strictly plus the documented
// limits, so that the tests and the local stand-ins (scripts/receiver
// -kind) check generated payloads against the vendor's format rather than
// against the code that made them. Only the parts of each format this
// service uses are pinned: a field outside them fails, as a reminder to
// pin it from the vendor's documentation first.
package vendorformat

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"
)

// decodeStrict decodes one JSON object into v, refusing unknown fields and
// trailing data.
func decodeStrict(body []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data after the object")
	}
	return nil
}

// SlackMessage is an incoming-webhook message with Block Kit blocks.
//
// Format: https://api.slack.com/messaging/webhooks (the payload: text,
// blocks) and https://api.slack.com/reference/block-kit/blocks (the
// blocks, with their limits).
type SlackMessage struct {
	// Text is the notification's fallback text (and what screen readers
	// and notifications show when blocks are present); at most 40,000
	// characters (https://api.slack.com/methods/chat.postMessage#truncating).
	Text   string       `json:"text"`
	Blocks []SlackBlock `json:"blocks"` // at most 50
}

// SlackBlock is one of the block types used: header, section, context,
// divider.
type SlackBlock struct {
	Type     string      `json:"type"`
	BlockID  string      `json:"block_id,omitempty"` // at most 255
	Text     *SlackText  `json:"text,omitempty"`     // header: plain_text, at most 150; section: at most 3,000
	Fields   []SlackText `json:"fields,omitempty"`   // section: at most 10, each at most 2,000
	Elements []SlackText `json:"elements,omitempty"` // context: 1 to 10 text (or image) elements
}

// SlackText is a text object
// (https://api.slack.com/reference/block-kit/composition-objects#text).
type SlackText struct {
	Type     string `json:"type"`               // plain_text or mrkdwn
	Text     string `json:"text"`               // at least 1 character
	Emoji    *bool  `json:"emoji,omitempty"`    // plain_text only
	Verbatim *bool  `json:"verbatim,omitempty"` // mrkdwn only
}

// ValidateSlack checks an incoming-webhook body against SlackMessage.
func ValidateSlack(body []byte) error {
	var m SlackMessage
	if err := decodeStrict(body, &m); err != nil {
		return fmt.Errorf("slack: %w", err)
	}
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf("slack: "+format, a...)) }
	if m.Text == "" && len(m.Blocks) == 0 {
		bad("text or blocks is required")
	}
	if utf8.RuneCountInString(m.Text) > 40000 {
		bad("text is over 40,000 characters")
	}
	if len(m.Blocks) > 50 {
		bad("%d blocks: at most 50", len(m.Blocks))
	}
	for i, b := range m.Blocks {
		at := fmt.Sprintf("blocks[%d]", i)
		if utf8.RuneCountInString(b.BlockID) > 255 {
			bad("%s.block_id is over 255 characters", at)
		}
		switch b.Type {
		case "header":
			if b.Text == nil || b.Text.Type != "plain_text" {
				bad("%s: a header's text must be plain_text", at)
			} else {
				checkText(bad, at+".text", *b.Text, 150)
			}
			if b.Fields != nil || b.Elements != nil {
				bad("%s: a header has only text", at)
			}
		case "section":
			if b.Text == nil && len(b.Fields) == 0 {
				bad("%s: a section needs text or fields", at)
			}
			if b.Text != nil {
				checkText(bad, at+".text", *b.Text, 3000)
			}
			if len(b.Fields) > 10 {
				bad("%s: %d fields, at most 10", at, len(b.Fields))
			}
			for j, f := range b.Fields {
				checkText(bad, fmt.Sprintf("%s.fields[%d]", at, j), f, 2000)
			}
			if b.Elements != nil {
				bad("%s: a section has no elements", at)
			}
		case "context":
			if len(b.Elements) < 1 || len(b.Elements) > 10 {
				bad("%s: a context has 1 to 10 elements", at)
			}
			for j, e := range b.Elements {
				checkText(bad, fmt.Sprintf("%s.elements[%d]", at, j), e, 3000)
			}
			if b.Text != nil || b.Fields != nil {
				bad("%s: a context has only elements", at)
			}
		case "divider":
			if b.Text != nil || b.Fields != nil || b.Elements != nil {
				bad("%s: a divider has no content", at)
			}
		default:
			bad("%s: type %q is not a block type pinned here", at, b.Type)
		}
	}
	return errors.Join(errs...)
}

func checkText(bad func(string, ...any), at string, t SlackText, limit int) {
	switch t.Type {
	case "plain_text":
		if t.Verbatim != nil {
			bad("%s: verbatim is for mrkdwn", at)
		}
	case "mrkdwn":
		if t.Emoji != nil {
			bad("%s: emoji is for plain_text", at)
		}
	default:
		bad("%s: type must be plain_text or mrkdwn", at)
	}
	if n := utf8.RuneCountInString(t.Text); n < 1 || n > limit {
		bad("%s: text must be 1 to %d characters, is %d", at, limit, n)
	}
}

// PagerDutyEvent is an Events API v2 event.
//
// Format: https://developer.pagerduty.com/api-reference/368ae3d938c9e-send-an-event-to-pager-duty
// and https://developer.pagerduty.com/docs/events-api-v2/trigger-events/
// (the PD-CEF payload fields, severities and limits).
type PagerDutyEvent struct {
	RoutingKey  string            `json:"routing_key"`         // the integration key, 32 characters
	EventAction string            `json:"event_action"`        // trigger, acknowledge or resolve
	DedupKey    string            `json:"dedup_key,omitempty"` // at most 255; required to acknowledge or resolve
	Payload     *PagerDutyPayload `json:"payload,omitempty"`   // required to trigger
	Links       []PagerDutyLink   `json:"links,omitempty"`
	Images      []PagerDutyImage  `json:"images,omitempty"`
	Client      string            `json:"client,omitempty"`
	ClientURL   string            `json:"client_url,omitempty"`
}

// PagerDutyPayload is the payload of a trigger event.
type PagerDutyPayload struct {
	Summary       string         `json:"summary"`             // required, at most 1,024 characters
	Source        string         `json:"source"`              // required
	Severity      string         `json:"severity"`            // required: critical, error, warning or info
	Timestamp     string         `json:"timestamp,omitempty"` // ISO 8601
	Component     string         `json:"component,omitempty"`
	Group         string         `json:"group,omitempty"`
	Class         string         `json:"class,omitempty"`
	CustomDetails map[string]any `json:"custom_details,omitempty"`
}

// PagerDutyLink is a link shown with the incident.
type PagerDutyLink struct {
	Href string `json:"href"`
	Text string `json:"text,omitempty"`
}

// PagerDutyImage is an image shown with the incident.
type PagerDutyImage struct {
	Src  string `json:"src"`
	Href string `json:"href,omitempty"`
	Alt  string `json:"alt,omitempty"`
}

// ValidatePagerDuty checks an Events API v2 body against PagerDutyEvent and
// returns it.
func ValidatePagerDuty(body []byte) (PagerDutyEvent, error) {
	var e PagerDutyEvent
	if err := decodeStrict(body, &e); err != nil {
		return e, fmt.Errorf("pagerduty: %w", err)
	}
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf("pagerduty: "+format, a...)) }
	if len(e.RoutingKey) != 32 {
		bad("routing_key must be 32 characters, is %d", len(e.RoutingKey))
	}
	if len(e.DedupKey) > 255 {
		bad("dedup_key is over 255 characters")
	}
	switch e.EventAction {
	case "trigger":
		if e.Payload == nil {
			bad("payload is required to trigger")
		}
	case "acknowledge", "resolve":
		if e.DedupKey == "" {
			bad("dedup_key is required to %s", e.EventAction)
		}
	default:
		bad("event_action must be trigger, acknowledge or resolve")
	}
	if p := e.Payload; p != nil {
		if n := utf8.RuneCountInString(p.Summary); n < 1 || n > 1024 {
			bad("payload.summary must be 1 to 1,024 characters, is %d", n)
		}
		if p.Source == "" {
			bad("payload.source is required")
		}
		switch p.Severity {
		case "critical", "error", "warning", "info":
		default:
			bad("payload.severity must be critical, error, warning or info")
		}
		if p.Timestamp != "" && !isISO8601(p.Timestamp) {
			bad("payload.timestamp %q is not an ISO 8601 time", p.Timestamp)
		}
	}
	for i, l := range e.Links {
		if l.Href == "" {
			bad("links[%d].href is required", i)
		}
	}
	for i, im := range e.Images {
		if im.Src == "" {
			bad("images[%d].src is required", i)
		}
	}
	return e, errors.Join(errs...)
}

// isISO8601 accepts the forms the documentation shows: RFC 3339, and its
// examples' offsets without a colon (+0000).
func isISO8601(s string) bool {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999-0700"} {
		if _, err := time.Parse(layout, s); err == nil {
			return true
		}
	}
	return false
}
