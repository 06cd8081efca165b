package voiceops

import (
	"maps"
	"slices"
	"time"
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

// WebhookEndpoint is a subscriber of alert events.
type WebhookEndpoint struct {
	ID         string
	AccountID  string
	Name       string
	URL        string
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
	URL        string
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
	return WebhookEndpoint{
		ID: id, AccountID: accountID, Name: in.Name, URL: in.URL, EventTypes: in.EventTypes,
		Headers: headers, TimeoutMS: timeout, Enabled: enabled, CreatedAt: now, UpdatedAt: now,
		Secret: secret, Version: 1,
	}
}

// EndpointPatch holds the fields a PATCH sent; nil means "not sent".
type EndpointPatch struct {
	Name       *string
	URL        *string
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
	changed := out.Name != e.Name || out.URL != e.URL || !slices.Equal(out.EventTypes, e.EventTypes) ||
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
