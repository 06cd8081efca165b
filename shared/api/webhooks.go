package api

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"net/http"
	"time"

	"github.com/voiceops/opsapi/shared/voiceops"
)

// webhooksRoutes lists every route of the webhook endpoints group (doc 1 and
// the additions of DECISIONS.md).
func webhooksRoutes(s *server, mux *http.ServeMux) {
	mux.Handle("POST /v1/webhook-endpoints", s.doc1(s.createEndpoint))
	mux.Handle("GET /v1/webhook-endpoints", s.doc1(s.listEndpoints))
	mux.Handle("GET /v1/webhook-endpoints/{endpoint_id}", s.doc1(s.getEndpoint))
	mux.Handle("PATCH /v1/webhook-endpoints/{endpoint_id}", s.doc1(s.patchEndpoint))
	mux.Handle("DELETE /v1/webhook-endpoints/{endpoint_id}", s.doc1(s.deleteEndpoint))
	mux.Handle("POST /v1/webhook-endpoints/{endpoint_id}/rotate-secret", s.doc1(s.rotateSecret))
}

// endpointJSON is the webhook endpoint record. SigningSecret is set only in
// the create response.
type endpointJSON struct {
	ID            string            `json:"id"`
	Name          string            `json:"name"`
	URL           string            `json:"url"`
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
	return endpointJSON{
		ID: e.ID, Name: e.Name, URL: e.URL, EventTypes: types, Headers: headers, TimeoutMS: e.TimeoutMS,
		Enabled: e.Enabled, CreatedAt: formatTime(e.CreatedAt), UpdatedAt: formatTime(e.UpdatedAt),
	}
}

// newSigningSecret returns "whsec_" + base64 of 32 random bytes, the format
// of the Standard Webhooks libraries.
func newSigningSecret() string {
	b := make([]byte, voiceops.SigningSecretBytes)
	_, _ = rand.Read(b) // never fails (Go 1.24+)
	return "whsec_" + base64.StdEncoding.EncodeToString(b)
}

func (s *server) readEndpointFields(o *object, create bool) voiceops.EndpointPatch {
	var p voiceops.EndpointPatch
	if name, ok := o.str("name", create); ok {
		if msg := voiceops.CheckName(name); msg != "" {
			o.fail("name", msg)
		}
		p.Name = &name
	}
	if u, ok := o.str("url", create); ok {
		if msg := s.URLPolicy.CheckURL(u); msg != "" {
			o.fail("url", msg)
		}
		p.URL = &u
	}
	if ts, ok := o.stringList("event_types", create); ok {
		types, msg := voiceops.CheckEventTypes(ts)
		if msg != "" {
			o.fail("event_types", msg)
		}
		p.EventTypes = &types
	}
	if h, ok := o.stringMap("headers", false); ok {
		o.errs = append(o.errs, voiceops.CheckHeaders(h)...)
		if h == nil {
			h = map[string]string{}
		}
		p.Headers = &h
	}
	if v, ok := o.integer("timeout_ms", false, voiceops.CheckTimeout(0)); ok {
		if msg := voiceops.CheckTimeout(v); msg != "" {
			o.fail("timeout_ms", msg)
		}
		p.TimeoutMS = &v
	}
	if v, ok := o.boolean("enabled", false); ok {
		p.Enabled = &v
	}
	return p
}

func (s *server) createEndpoint(w http.ResponseWriter, r *http.Request, p voiceops.Principal) error {
	o, err := readObject(w, r, false)
	if err != nil {
		return err
	}
	f := s.readEndpointFields(o, true)
	if err := o.done(); err != nil {
		return err
	}
	in := voiceops.EndpointInput{Name: *f.Name, URL: *f.URL, EventTypes: *f.EventTypes, TimeoutMS: f.TimeoutMS, Enabled: f.Enabled}
	if f.Headers != nil {
		in.Headers = *f.Headers
	}
	secret := newSigningSecret()
	e := voiceops.NewEndpoint(voiceops.NewID(voiceops.PrefixEndpoint), p.AccountID, secret, in, s.Now().UTC().Truncate(time.Millisecond))
	if err := s.Stores.Endpoints.CreateEndpoint(r.Context(), e); err != nil {
		return err
	}
	out := toEndpointJSON(e)
	out.SigningSecret = secret
	writeJSON(w, http.StatusCreated, out)
	return nil
}

func (s *server) listEndpoints(w http.ResponseWriter, r *http.Request, p voiceops.Principal) error {
	q := r.URL.Query()
	var errs []voiceops.FieldError
	var enabled *bool
	var eventType *voiceops.EventType
	if q.Has("enabled") {
		b, ok := parseBool(q.Get("enabled"))
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
	eps, err := s.Stores.Endpoints.ListEndpoints(r.Context(), p.AccountID)
	if err != nil {
		return err
	}
	out := listJSON[endpointJSON]{Data: make([]endpointJSON, 0, len(eps))}
	for _, e := range eps {
		if (enabled == nil || e.Enabled == *enabled) && (eventType == nil || e.Subscribes(*eventType)) {
			out.Data = append(out.Data, toEndpointJSON(e))
		}
	}
	writeJSON(w, http.StatusOK, out)
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

func (s *server) getEndpoint(w http.ResponseWriter, r *http.Request, p voiceops.Principal) error {
	id, err := pathEndpointID(r)
	if err != nil {
		return err
	}
	e, err := s.Stores.Endpoints.GetEndpoint(r.Context(), p.AccountID, id)
	if err != nil {
		return notFoundAs(err, "webhook endpoint")
	}
	writeJSON(w, http.StatusOK, toEndpointJSON(e))
	return nil
}

// updateEndpoint reads, changes and conditionally writes an endpoint,
// retrying when another writer got there first.
func (s *server) updateEndpoint(r *http.Request, accountID, id string, change func(voiceops.WebhookEndpoint) (voiceops.WebhookEndpoint, bool)) (voiceops.WebhookEndpoint, error) {
	for attempt := 0; ; attempt++ {
		cur, err := s.Stores.Endpoints.GetEndpoint(r.Context(), accountID, id)
		if err != nil {
			return cur, notFoundAs(err, "webhook endpoint")
		}
		next, changed := change(cur)
		if !changed {
			return cur, nil
		}
		next.Version = cur.Version + 1
		err = s.Stores.Endpoints.UpdateEndpoint(r.Context(), next, cur.Version)
		if errors.Is(err, voiceops.ErrConflictingWrite) && attempt+1 < updateAttempts {
			continue
		}
		if err != nil {
			return cur, notFoundAs(err, "webhook endpoint")
		}
		return next, nil
	}
}

func (s *server) patchEndpoint(w http.ResponseWriter, r *http.Request, p voiceops.Principal) error {
	id, err := pathEndpointID(r)
	if err != nil {
		return err
	}
	o, err := readObject(w, r, false)
	if err != nil {
		return err
	}
	patch := s.readEndpointFields(o, false)
	if err := o.done(); err != nil {
		return err
	}
	now := s.Now().UTC().Truncate(time.Millisecond)
	e, err := s.updateEndpoint(r, p.AccountID, id, func(cur voiceops.WebhookEndpoint) (voiceops.WebhookEndpoint, bool) {
		return patch.Apply(cur, now)
	})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, toEndpointJSON(e))
	return nil
}

func (s *server) deleteEndpoint(w http.ResponseWriter, r *http.Request, p voiceops.Principal) error {
	id, err := pathEndpointID(r)
	if err != nil {
		return err
	}
	if err := s.Stores.Endpoints.DeleteEndpoint(r.Context(), p.AccountID, id); err != nil {
		return notFoundAs(err, "webhook endpoint")
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

type rotateJSON struct {
	SigningSecret           string  `json:"signing_secret"`
	PreviousSecretExpiresAt *string `json:"previous_secret_expires_at"`
}

func (s *server) rotateSecret(w http.ResponseWriter, r *http.Request, p voiceops.Principal) error {
	id, err := pathEndpointID(r)
	if err != nil {
		return err
	}
	o, err := readObject(w, r, true)
	if err != nil {
		return err
	}
	var overlap int64
	if v, ok := o.integer("previous_secret_expires_in", false, "must be an integer between 0 and 86400"); ok {
		if v < 0 || v > voiceops.MaxSecretOverlap {
			o.fail("previous_secret_expires_in", "must be an integer between 0 and 86400")
		}
		overlap = v
	}
	if err := o.done(); err != nil {
		return err
	}
	now := s.Now().UTC().Truncate(time.Millisecond)
	secret := newSigningSecret()
	e, err := s.updateEndpoint(r, p.AccountID, id, func(cur voiceops.WebhookEndpoint) (voiceops.WebhookEndpoint, bool) {
		return voiceops.RotateSecret(cur, secret, time.Duration(overlap)*time.Second, now), true
	})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, rotateJSON{SigningSecret: secret, PreviousSecretExpiresAt: formatTimePtr(e.PreviousExpiresAt)})
	return nil
}
