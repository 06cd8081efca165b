package studioapi

import (
	"crypto/rand"
	"encoding/base64"
	"net/http"
	"time"

	"github.com/voiceops/opsapi/shared/alerts/alerting"
	"github.com/voiceops/opsapi/shared/platform/httpapi"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// Webhooks is the webhook endpoints group (functions/webhooks): endpoints,
// their secrets, test events and the delivery log.
type Webhooks struct {
	Endpoints  voiceops.EndpointStore
	Deliveries voiceops.DeliveryStore
	Service    *alerting.Service
	Outbox     Outbox
	// URLPolicy decides which webhook URLs may be saved (the dev server may
	// allow loopback receivers).
	URLPolicy voiceops.URLPolicy
	// Events and ConsoleURL show what a delivery posts (deliveryPayload):
	// the stored event, rendered for the endpoint's kind with the console
	// links the dispatcher adds ("" leaves them out).
	Events     voiceops.EventStore
	ConsoleURL string
}

// Routes lists every route of the webhooks group (the studio host).
func (h *Webhooks) Routes() []httpapi.Route {
	return []httpapi.Route{
		studioRoute("POST", "/v1/webhook-endpoints", h.createEndpoint).Creates(),
		studioRoute("GET", "/v1/webhook-endpoints", h.listEndpoints),
		studioRoute("GET", "/v1/webhook-endpoints/{endpoint_id}", h.getEndpoint),
		studioRoute("PATCH", "/v1/webhook-endpoints/{endpoint_id}", h.patchEndpoint),
		studioRoute("DELETE", "/v1/webhook-endpoints/{endpoint_id}", h.deleteEndpoint),
		studioRoute("POST", "/v1/webhook-endpoints/{endpoint_id}/rotate-secret", h.rotateSecret).Creates(),
		studioRoute("POST", "/v1/webhook-endpoints/{endpoint_id}/test", h.testEndpoint).Creates(),
		studioRoute("GET", "/v1/webhook-endpoints/{endpoint_id}/deliveries", h.listDeliveries),
		studioRoute("POST", "/v1/webhook-endpoints/{endpoint_id}/deliveries/{delivery_id}/retry", h.retryDelivery).Creates(),
		studioRoute("GET", "/v1/webhook-endpoints/{endpoint_id}/deliveries/{delivery_id}/payload", h.deliveryPayload), // our addition
	}
}

// endpointJSON is the webhook endpoint record. SigningSecret is set only in
// the create response of a webhook endpoint (the others are not signed).
// Kind is left out for webhook endpoints, so a vendor client that never
// sends it sees the record as before; RoutingKey is a pagerduty
// endpoint's alone.
type endpointJSON struct {
	ID            string            `json:"id"`
	Name          string            `json:"name"`
	Kind          string            `json:"kind,omitempty"`
	URL           string            `json:"url"`
	RoutingKey    string            `json:"routing_key,omitempty"`
	EventTypes    []string          `json:"event_types"`
	Headers       map[string]string `json:"headers"`
	TimeoutMS     int64             `json:"timeout_ms"`
	Enabled       bool              `json:"enabled"`
	CreatedAt     string            `json:"created_at"`
	UpdatedAt     string            `json:"updated_at"`
	SigningSecret string            `json:"signing_secret,omitempty"`
}

func toEndpointJSON(e voiceops.WebhookEndpoint) endpointJSON {
	types := make([]string, len(e.EventTypes))
	for i, t := range e.EventTypes {
		types[i] = string(t)
	}
	headers := e.Headers
	if headers == nil {
		headers = map[string]string{}
	}
	kind := string(e.Kind)
	if e.Kind == voiceops.EndpointWebhook {
		kind = ""
	}
	return endpointJSON{
		ID: e.ID, Name: e.Name, Kind: kind, URL: e.URL, RoutingKey: e.RoutingKey, EventTypes: types, Headers: headers, TimeoutMS: e.TimeoutMS,
		Enabled: e.Enabled, CreatedAt: httpapi.Time(e.CreatedAt), UpdatedAt: httpapi.Time(e.UpdatedAt),
	}
}

// newSigningSecret returns "whsec_" + base64 of 32 random bytes, the format
// of the Standard Webhooks libraries.
func newSigningSecret() string {
	b := make([]byte, voiceops.SigningSecretBytes)
	_, _ = rand.Read(b) // never fails (Go 1.24+)
	return "whsec_" + base64.StdEncoding.EncodeToString(b)
}

func (h *Webhooks) readEndpointFields(o *httpapi.Object, create bool) voiceops.EndpointPatch {
	var p voiceops.EndpointPatch
	if name, ok := o.Str("name", create); ok {
		if msg := voiceops.CheckName(name); msg != "" {
			o.Fail("name", msg)
		}
		p.Name = &name
	}
	if u, ok := o.Str("url", false); ok { // required by kind: CheckKindFields
		if msg := h.URLPolicy.CheckURL(u); msg != "" {
			o.Fail("url", msg)
		}
		p.URL = &u
	}
	if k, ok := o.Str("routing_key", false); ok {
		p.RoutingKey = &k
	}
	if ts, ok := o.StringList("event_types", create); ok {
		types, msg := voiceops.CheckEventTypes(ts)
		if msg != "" {
			o.Fail("event_types", msg)
		}
		p.EventTypes = &types
	}
	if hdrs, ok := o.StringMap("headers", false); ok {
		o.FailAll(voiceops.CheckHeaders(hdrs)...)
		if hdrs == nil {
			hdrs = map[string]string{}
		}
		p.Headers = &hdrs
	}
	if v, ok := o.Integer("timeout_ms", false, voiceops.CheckTimeout(0)); ok {
		if msg := voiceops.CheckTimeout(v); msg != "" {
			o.Fail("timeout_ms", msg)
		}
		p.TimeoutMS = &v
	}
	if v, ok := o.Boolean("enabled", false); ok {
		p.Enabled = &v
	}
	return p
}

func (h *Webhooks) createEndpoint(w http.ResponseWriter, r *http.Request, p httpapi.Caller) error {
	o, err := httpapi.ReadObject(w, r, false)
	if err != nil {
		return err
	}
	kind := voiceops.EndpointWebhook
	if k, ok := o.Str("kind", false); ok {
		if kind, ok = voiceops.ParseEnum(k, voiceops.EndpointKinds); !ok {
			o.Fail("kind", voiceops.OneOf(voiceops.EndpointKinds))
		}
	}
	f := h.readEndpointFields(o, true)
	if kind != "" {
		o.FailAll(h.URLPolicy.CheckKindFields(kind, f, o.Has)...)
	}
	if err := o.Done(); err != nil {
		return err
	}
	in := voiceops.EndpointInput{Name: *f.Name, Kind: kind, EventTypes: *f.EventTypes, TimeoutMS: f.TimeoutMS, Enabled: f.Enabled}
	if f.URL != nil {
		in.URL = *f.URL
	}
	if f.RoutingKey != nil {
		in.RoutingKey = *f.RoutingKey
	}
	if f.Headers != nil {
		in.Headers = *f.Headers
	}
	// Every endpoint has a secret, so the store and rotation need no case
	// for kinds that sign nothing; only a webhook's is shown.
	secret := newSigningSecret()
	e, err := h.Service.CreateEndpoint(r.Context(), p.AccountID, secret, in)
	if err != nil {
		return err
	}
	out := toEndpointJSON(e)
	if e.Kind == voiceops.EndpointWebhook {
		out.SigningSecret = secret
	}
	httpapi.WriteJSON(w, http.StatusCreated, out)
	return nil
}

func (h *Webhooks) listEndpoints(w http.ResponseWriter, r *http.Request, p httpapi.Caller) error {
	q := r.URL.Query()
	var errs []voiceops.FieldError
	var enabled *bool
	var eventType *voiceops.EventType
	if q.Has("enabled") {
		b, ok := httpapi.ParseBool(q.Get("enabled"))
		if !ok {
			errs = append(errs, voiceops.FieldError{Field: "enabled", Message: "must be true or false"})
		}
		enabled = &b
	}
	if q.Has("event_type") {
		t, ok := voiceops.ParseEnum(q.Get("event_type"), voiceops.EventTypes)
		if !ok {
			errs = append(errs, voiceops.FieldError{Field: "event_type", Message: voiceops.OneOf(voiceops.EventTypes)})
		}
		eventType = &t
	}
	if len(errs) > 0 {
		return &voiceops.Error{Kind: voiceops.KindBadRequest, Message: "invalid query parameter", Fields: errs}
	}
	eps, err := h.Endpoints.ListEndpoints(r.Context(), p.AccountID)
	if err != nil {
		return err
	}
	out := listJSON[endpointJSON]{Data: make([]endpointJSON, 0, len(eps))}
	for _, e := range eps {
		if (enabled == nil || e.Enabled == *enabled) && (eventType == nil || e.Subscribes(*eventType)) {
			out.Data = append(out.Data, toEndpointJSON(e))
		}
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

// pathEndpointID returns the endpoint ID of the path: malformed is 422, too
// long to exist is 404.
func pathEndpointID(r *http.Request) (string, error) {
	id := r.PathValue("endpoint_id")
	if !voiceops.ValidEndpointID(id) {
		return "", voiceops.Invalid(voiceops.FieldError{Field: "endpoint_id", Message: "must match ^whe_[A-Za-z0-9]+$"})
	}
	if len(id) > voiceops.MaxIDLength {
		return "", voiceops.ErrNotFound
	}
	return id, nil
}

func (h *Webhooks) getEndpoint(w http.ResponseWriter, r *http.Request, p httpapi.Caller) error {
	id, err := pathEndpointID(r)
	if err != nil {
		return err
	}
	e, err := h.Endpoints.GetEndpoint(r.Context(), p.AccountID, id)
	if err != nil {
		return httpapi.NotFoundAs(err, "webhook endpoint")
	}
	httpapi.WriteJSON(w, http.StatusOK, toEndpointJSON(e))
	return nil
}

func (h *Webhooks) patchEndpoint(w http.ResponseWriter, r *http.Request, p httpapi.Caller) error {
	id, err := pathEndpointID(r)
	if err != nil {
		return err
	}
	o, err := httpapi.ReadObject(w, r, false)
	if err != nil {
		return err
	}
	if o.Has("kind") {
		o.Take("kind", false, true)
		o.Fail("kind", "cannot be changed: create an endpoint of the other kind")
	}
	patch := h.readEndpointFields(o, false)
	// The kind decides which fields fit; it never changes, so the stored
	// one read here is the one the patch applies to.
	cur, getErr := h.Endpoints.GetEndpoint(r.Context(), p.AccountID, id)
	if getErr == nil {
		o.FailAll(h.URLPolicy.CheckKindFields(cur.Kind, patch, nil)...)
	}
	if err := o.Done(); err != nil {
		return err
	}
	if getErr != nil {
		return httpapi.NotFoundAs(getErr, "webhook endpoint")
	}
	e, err := h.Service.PatchReadEndpoint(r.Context(), cur, patch)
	if err != nil {
		return httpapi.NotFoundAs(err, "webhook endpoint")
	}
	httpapi.WriteJSON(w, http.StatusOK, toEndpointJSON(e))
	return nil
}

func (h *Webhooks) deleteEndpoint(w http.ResponseWriter, r *http.Request, p httpapi.Caller) error {
	id, err := pathEndpointID(r)
	if err != nil {
		return err
	}
	if err := h.Endpoints.DeleteEndpoint(r.Context(), p.AccountID, id); err != nil {
		return httpapi.NotFoundAs(err, "webhook endpoint")
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

type rotateJSON struct {
	SigningSecret           string  `json:"signing_secret"`
	PreviousSecretExpiresAt *string `json:"previous_secret_expires_at"`
}

func (h *Webhooks) rotateSecret(w http.ResponseWriter, r *http.Request, p httpapi.Caller) error {
	id, err := pathEndpointID(r)
	if err != nil {
		return err
	}
	o, err := httpapi.ReadObject(w, r, true)
	if err != nil {
		return err
	}
	var overlap int64
	if v, ok := o.Integer("previous_secret_expires_in", false, "must be an integer between 0 and 86400"); ok {
		if v < 0 || v > voiceops.MaxSecretOverlap {
			o.Fail("previous_secret_expires_in", "must be an integer between 0 and 86400")
		}
		overlap = v
	}
	if err := o.Done(); err != nil {
		return err
	}
	secret := newSigningSecret()
	e, err := h.Service.RotateSecret(r.Context(), p.AccountID, id, secret, time.Duration(overlap)*time.Second)
	if err != nil {
		return httpapi.NotFoundAs(err, "webhook endpoint")
	}
	httpapi.WriteJSON(w, http.StatusOK, rotateJSON{SigningSecret: secret, PreviousSecretExpiresAt: httpapi.TimePtr(e.PreviousExpiresAt)})
	return nil
}
