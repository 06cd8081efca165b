package studioapi

import (
	"context"
	"net/http"
	"strconv"
	"unicode/utf8"

	"github.com/voiceops/opsapi/shared/alerts/notify"
	"github.com/voiceops/opsapi/shared/platform/httpapi"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// Outbox is what the webhooks group asks of the delivery machinery
// (shared/alerts/delivery): send test events and retry deliveries.
type Outbox interface {
	SendTest(ctx context.Context, ep voiceops.WebhookEndpoint) (voiceops.AlertEvent, voiceops.Delivery, error)
	Retry(ctx context.Context, accountID, endpointID, deliveryID string) (voiceops.Delivery, error)
}

// attemptJSON is one entry of the delivery log: never a body or a secret.
type attemptJSON struct {
	Number     int     `json:"number"`
	At         string  `json:"at"`
	StatusCode *int    `json:"status_code"`
	DurationMS int64   `json:"duration_ms"`
	Error      *string `json:"error"`
}

// deliveryJSON is a delivery with its attempts.
type deliveryJSON struct {
	ID            string        `json:"id"`
	EventID       string        `json:"event_id"`
	EventType     string        `json:"event_type"`
	Test          bool          `json:"test"`
	Status        string        `json:"status"`
	CreatedAt     string        `json:"created_at"`
	UpdatedAt     string        `json:"updated_at"`
	NextAttemptAt *string       `json:"next_attempt_at"`
	Attempts      []attemptJSON `json:"attempts"`
}

func toDeliveryJSON(d voiceops.Delivery) deliveryJSON {
	out := deliveryJSON{
		ID: d.ID, EventID: d.EventID, EventType: string(d.EventType), Test: d.Test, Status: string(d.Status),
		CreatedAt: httpapi.Time(d.CreatedAt), UpdatedAt: httpapi.Time(d.UpdatedAt), Attempts: []attemptJSON{},
	}
	if d.Status == voiceops.DeliveryPending {
		out.NextAttemptAt = httpapi.TimePtr(d.NextAttemptAt)
	}
	for _, a := range d.Attempts {
		aj := attemptJSON{Number: a.Number, At: httpapi.Time(a.At), DurationMS: a.DurationMS}
		if a.StatusCode != 0 {
			code := a.StatusCode
			aj.StatusCode = &code
		}
		if a.Error != "" {
			msg := a.Error
			aj.Error = &msg
		}
		if a.Open() {
			continue // claimed and in flight: not a result yet
		}
		out.Attempts = append(out.Attempts, aj)
	}
	return out
}

type testJSON struct {
	EventID    string `json:"event_id"`
	DeliveryID string `json:"delivery_id"`
}

func (h *Webhooks) testEndpoint(w http.ResponseWriter, r *http.Request, p httpapi.Caller) error {
	id, err := pathEndpointID(r)
	if err != nil {
		return err
	}
	ep, err := h.Endpoints.GetEndpoint(r.Context(), p.AccountID, id)
	if err != nil {
		return httpapi.NotFoundAs(err, "webhook endpoint")
	}
	e, d, err := h.Outbox.SendTest(r.Context(), ep) // the endpoint as read: not read again
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusAccepted, testJSON{EventID: e.ID, DeliveryID: d.ID})
	return nil
}

// Limits of GET .../deliveries.
const (
	defaultDeliveries = 50
	maxDeliveries     = 100
)

func (h *Webhooks) listDeliveries(w http.ResponseWriter, r *http.Request, p httpapi.Caller) error {
	id, err := pathEndpointID(r)
	if err != nil {
		return err
	}
	limit := defaultDeliveries
	if q := r.URL.Query(); q.Has("limit") {
		n, err := strconv.Atoi(q.Get("limit"))
		if err != nil || n < 1 || n > maxDeliveries {
			return httpapi.BadRequest("limit", "must be an integer between 1 and 100")
		}
		limit = n
	}
	// The endpoint and its log are read at once (the log's key is of the
	// caller's account and endpoint); the log is dropped unread unless the
	// endpoint is there.
	var ds []voiceops.Delivery
	if _, err := h.endpointWith(r.Context(), p.AccountID, id, func(ctx context.Context) (err error) {
		ds, err = h.Deliveries.ListDeliveries(ctx, p.AccountID, id, limit)
		return err
	}); err != nil {
		return err
	}
	out := listJSON[deliveryJSON]{Data: make([]deliveryJSON, 0, len(ds))}
	for _, d := range ds {
		out.Data = append(out.Data, toDeliveryJSON(d))
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

// MaxPayloadView bounds the body GET .../payload shows: an alert event is
// about 1 KB, so only a body far beyond any event's size is cut.
const MaxPayloadView = 16 << 10

// payloadJSON is what every attempt of a delivery posts (our addition):
// the same bytes each time, built once from the stored event.
type payloadJSON struct {
	DeliveryID  string `json:"delivery_id"`
	EventID     string `json:"event_id"`
	ContentType string `json:"content_type"`
	Body        string `json:"body"`
	Truncated   bool   `json:"truncated"`
}

func (h *Webhooks) deliveryPayload(w http.ResponseWriter, r *http.Request, p httpapi.Caller) error {
	id, err := pathEndpointID(r)
	if err != nil {
		return err
	}
	dlv, err := pathDeliveryID(r)
	if err != nil {
		return err
	}
	var d voiceops.Delivery
	ep, err := h.endpointWith(r.Context(), p.AccountID, id, func(ctx context.Context) (err error) {
		d, err = h.Deliveries.GetDelivery(ctx, p.AccountID, id, dlv)
		return httpapi.NotFoundAs(err, "delivery")
	})
	if err != nil {
		return err
	}
	e, err := h.Events.GetEvent(r.Context(), p.AccountID, d.EventID)
	if err != nil {
		return httpapi.NotFoundAs(err, "delivery's event")
	}
	body, err := notify.Body(ep, e.Body, h.ConsoleURL)
	if err != nil {
		return err
	}
	out := payloadJSON{DeliveryID: d.ID, EventID: d.EventID, ContentType: "application/json"}
	if len(body) > MaxPayloadView {
		body = body[:MaxPayloadView]
		for len(body) > 0 && !utf8.Valid(body) { // never cut a character in two
			body = body[:len(body)-1]
		}
		out.Truncated = true
	}
	out.Body = string(body)
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

// endpointWith reads the account's endpoint id and, at the same time,
// what belongs to it with read, whose keys must be of the same account and
// endpoint: the request waits for one round trip, not two. When the
// endpoint is not found (404 "webhook endpoint") or its read fails, read
// is cancelled and what it read is dropped unseen; else read's error is
// returned.
func (h *Webhooks) endpointWith(ctx context.Context, accountID, id string, read func(context.Context) error) (voiceops.WebhookEndpoint, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- read(ctx) }()
	ep, err := h.Endpoints.GetEndpoint(ctx, accountID, id)
	if err != nil {
		cancel()
		<-done // no read outlives the request
		return ep, httpapi.NotFoundAs(err, "webhook endpoint")
	}
	return ep, <-done
}

// pathDeliveryID reads {delivery_id}: malformed is 422, too long to be one is 404.
func pathDeliveryID(r *http.Request) (string, error) {
	dlv := r.PathValue("delivery_id")
	if !voiceops.ValidDeliveryID(dlv) {
		return "", voiceops.Invalid(voiceops.FieldError{Field: "delivery_id", Message: "must match ^dlv_[A-Za-z0-9]+$"})
	}
	if len(dlv) > voiceops.MaxIDLength {
		return "", voiceops.Errorf(voiceops.KindNotFound, "delivery not found")
	}
	return dlv, nil
}

func (h *Webhooks) retryDelivery(w http.ResponseWriter, r *http.Request, p httpapi.Caller) error {
	id, err := pathEndpointID(r)
	if err != nil {
		return err
	}
	dlv, err := pathDeliveryID(r)
	if err != nil {
		return err
	}
	d, err := h.Outbox.Retry(r.Context(), p.AccountID, id, dlv)
	if err != nil {
		return httpapi.NotFoundAs(err, "delivery")
	}
	httpapi.WriteJSON(w, http.StatusAccepted, toDeliveryJSON(d))
	return nil
}
