package voiceops

import (
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/voiceops/opsapi/shared/voiceops/netguard"
)

// EventType is the type of an alert event delivered to webhook endpoints.
type EventType string

const (
	EventTriggered EventType = "alerts.triggered"
	EventResolved  EventType = "alerts.resolved"
)

// EventTypes lists every event type.
var EventTypes = []EventType{EventTriggered, EventResolved}

// Endpoint limits (docs/api.md, "Limits").
const (
	DefaultTimeoutMS   = 5000
	MinTimeoutMS       = 1000
	MaxTimeoutMS       = 30000
	MaxURLLength       = 2048
	MaxHeaders         = 20
	MaxHeaderValue     = 1024
	MaxHeaderName      = 256   // bytes; with MaxHeaders and MaxHeaderValue, an endpoint's headers stay far under the item limit
	MaxSecretOverlap   = 86400 // seconds a rotated secret may stay valid
	SigningSecretBytes = 32
)

// EndpointKind says what an endpoint receives: signed Standard Webhooks
// deliveries of the event body, or a message in a vendor's own format.
type EndpointKind string

const (
	EndpointWebhook   EndpointKind = "webhook" // the default, and what records without a kind are
	EndpointSlack     EndpointKind = "slack"
	EndpointPagerDuty EndpointKind = "pagerduty"
)

// EndpointKinds lists every kind.
var EndpointKinds = []EndpointKind{EndpointWebhook, EndpointSlack, EndpointPagerDuty}

const (
	// SlackHost is the only host a slack endpoint's URL may name (Slack's
	// incoming webhooks: https://api.slack.com/messaging/webhooks).
	SlackHost = "hooks.slack.com"
	// PagerDutyEventsURL is where a pagerduty endpoint posts
	// (https://developer.pagerduty.com/docs/events-api-v2/overview/).
	PagerDutyEventsURL = "https://events.pagerduty.com/v2/enqueue"
	// RoutingKeyLength is the length of a PagerDuty integration key.
	RoutingKeyLength = 32
)

// WebhookEndpoint is a subscriber of alert events.
type WebhookEndpoint struct {
	ID        string
	AccountID string
	Name      string
	Kind      EndpointKind
	URL       string
	// RoutingKey is a pagerduty endpoint's integration key.
	RoutingKey string
	EventTypes []EventType
	Headers    map[string]string
	TimeoutMS  int64
	Enabled    bool
	CreatedAt  time.Time
	UpdatedAt  time.Time
	// Secret signs deliveries. PreviousSecret, until PreviousExpiresAt, signs
	// them too, so receivers can rotate without dropping events.
	Secret            string
	PreviousSecret    string
	PreviousExpiresAt *time.Time
	Version           int64
}

// Subscribes reports whether the endpoint wants events of type t.
func (e WebhookEndpoint) Subscribes(t EventType) bool {
	for _, et := range e.EventTypes {
		if et == t {
			return true
		}
	}
	return false
}

// Signed reports whether deliveries to the endpoint carry signatures: a
// webhook's do; Slack and PagerDuty check none.
func (e WebhookEndpoint) Signed() bool {
	return e.Kind != EndpointSlack && e.Kind != EndpointPagerDuty
}

// ValidSecrets returns the secrets that sign a delivery made at now.
func (e WebhookEndpoint) ValidSecrets(now time.Time) []string {
	s := []string{e.Secret}
	if e.PreviousSecret != "" && e.PreviousExpiresAt != nil && now.Before(*e.PreviousExpiresAt) {
		s = append(s, e.PreviousSecret)
	}
	return s
}

// EndpointInput is a validated create request.
type EndpointInput struct {
	Name       string
	Kind       EndpointKind // "" is EndpointWebhook
	URL        string       // "" on pagerduty is PagerDutyEventsURL
	RoutingKey string
	EventTypes []EventType
	Headers    map[string]string
	TimeoutMS  *int64
	Enabled    *bool
}

// NewEndpoint returns an endpoint as created, with the given secret.
func NewEndpoint(id, accountID, secret string, in EndpointInput, now time.Time) WebhookEndpoint {
	timeout := int64(DefaultTimeoutMS)
	if in.TimeoutMS != nil {
		timeout = *in.TimeoutMS
	}
	enabled := true
	if in.Enabled != nil {
		enabled = *in.Enabled
	}
	headers := in.Headers
	if headers == nil {
		headers = map[string]string{}
	}
	kind, u := in.Kind, in.URL
	if kind == "" {
		kind = EndpointWebhook
	}
	if kind == EndpointPagerDuty && u == "" {
		u = PagerDutyEventsURL
	}
	return WebhookEndpoint{
		ID: id, AccountID: accountID, Name: in.Name, Kind: kind, URL: u, RoutingKey: in.RoutingKey, EventTypes: in.EventTypes,
		Headers: headers, TimeoutMS: timeout, Enabled: enabled, CreatedAt: now, UpdatedAt: now,
		Secret: secret, Version: 1,
	}
}

// EndpointPatch holds the fields a PATCH sent; nil means "not sent".
type EndpointPatch struct {
	Name       *string
	URL        *string
	RoutingKey *string
	EventTypes *[]EventType
	Headers    *map[string]string
	TimeoutMS  *int64
	Enabled    *bool
}

// Apply returns the endpoint with the patch applied, and whether anything
// changed; an unchanged endpoint keeps its updated_at.
func (p EndpointPatch) Apply(e WebhookEndpoint, now time.Time) (WebhookEndpoint, bool) {
	out := e
	if p.Name != nil {
		out.Name = *p.Name
	}
	if p.URL != nil {
		out.URL = *p.URL
	}
	if p.RoutingKey != nil {
		out.RoutingKey = *p.RoutingKey
	}
	if p.EventTypes != nil {
		out.EventTypes = *p.EventTypes
	}
	if p.Headers != nil {
		out.Headers = *p.Headers
	}
	if p.TimeoutMS != nil {
		out.TimeoutMS = *p.TimeoutMS
	}
	if p.Enabled != nil {
		out.Enabled = *p.Enabled
	}
	changed := out.Name != e.Name || out.URL != e.URL || out.RoutingKey != e.RoutingKey || !slices.Equal(out.EventTypes, e.EventTypes) ||
		!maps.Equal(out.Headers, e.Headers) || out.TimeoutMS != e.TimeoutMS || out.Enabled != e.Enabled
	if !changed {
		return e, false
	}
	out.UpdatedAt = now
	return out, true
}

// RotateSecret replaces the signing secret. With a positive overlap the old
// secret keeps signing deliveries until now+overlap; with zero it stops at
// once.
func RotateSecret(e WebhookEndpoint, secret string, overlap time.Duration, now time.Time) WebhookEndpoint {
	e.PreviousSecret, e.PreviousExpiresAt = "", nil
	if overlap > 0 {
		until := now.Add(overlap)
		e.PreviousSecret, e.PreviousExpiresAt = e.Secret, &until
	}
	e.Secret = secret
	e.UpdatedAt = now
	return e
}

// CheckKindFields returns the errors of the fields read (p) that do not
// fit an endpoint of kind: create passes every field it read and sent,
// which says whether a field was in the request at all (a required one
// that was sent but unreadable has its own error); PATCH passes those it
// read with the stored endpoint's kind (a kind never changes) and nil.
// The URL has passed CheckURL already when read.
func (pol URLPolicy) CheckKindFields(kind EndpointKind, p EndpointPatch, sent func(field string) bool) []FieldError {
	create := sent != nil
	var errs []FieldError
	if p.Headers != nil && len(*p.Headers) > 0 && kind != EndpointWebhook {
		errs = append(errs, FieldError{"headers", "must be empty for kind " + string(kind) + ": it sends no custom headers"})
	}
	if p.RoutingKey != nil && kind != EndpointPagerDuty {
		errs = append(errs, FieldError{"routing_key", "must not be set for kind " + string(kind) + ": only pagerduty takes a routing key"})
	}
	switch kind {
	case EndpointWebhook, EndpointSlack:
		if create && !sent("url") {
			errs = append(errs, FieldError{"url", "is required"})
		}
	case EndpointPagerDuty:
		if create && !sent("routing_key") {
			errs = append(errs, FieldError{"routing_key", "is required for kind pagerduty"})
		}
		if p.RoutingKey != nil {
			if msg := checkRoutingKey(*p.RoutingKey); msg != "" {
				errs = append(errs, FieldError{"routing_key", msg})
			}
		}
	}
	if p.URL != nil && pol.CheckURL(*p.URL) == "" {
		if msg := pol.checkKindURL(kind, *p.URL); msg != "" {
			errs = append(errs, FieldError{"url", msg})
		}
	}
	return errs
}

// checkKindURL checks the host of a valid URL against its kind: Slack's
// incoming-webhook host, PagerDuty's Events API; a loopback stand-in for
// either where the policy allows loopback receivers.
func (pol URLPolicy) checkKindURL(kind EndpointKind, raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "must be an absolute https:// URL with a host"
	}
	if pol.AllowLoopback && netguard.IsLoopbackName(u.Hostname()) {
		return ""
	}
	switch kind {
	case EndpointSlack:
		if !strings.EqualFold(u.Hostname(), SlackHost) || u.Port() != "" {
			return "must be a Slack incoming-webhook URL on " + SlackHost
		}
	case EndpointPagerDuty:
		if raw != PagerDutyEventsURL {
			return "must be " + PagerDutyEventsURL + " or left out"
		}
	}
	return ""
}

// checkRoutingKey validates a PagerDuty integration key: 32 letters and
// digits.
func checkRoutingKey(k string) string {
	if len(k) != RoutingKeyLength {
		return fmt.Sprintf("must be %d characters", RoutingKeyLength)
	}
	for i := 0; i < len(k); i++ {
		if c := k[i]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return fmt.Sprintf("must be %d letters and digits", RoutingKeyLength)
		}
	}
	return ""
}
