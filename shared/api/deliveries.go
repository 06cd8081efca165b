package api

import (
	"context"
	"net/http"
	"strconv"

	"github.com/voiceops/opsapi/shared/voiceops"
)

// Outbox is what the API asks of the delivery machinery (shared/delivery):
// fan out events it wrote, send test events, and retry deliveries.
type Outbox interface {
	Fanout(ctx context.Context, e voiceops.AlertEvent) error
	SendTest(ctx context.Context, ep voiceops.WebhookEndpoint) (voiceops.AlertEvent, voiceops.Delivery, error)
	Retry(ctx context.Context, accountID, endpointID, deliveryID string) (voiceops.Delivery, error)
}

// deliveriesRoutes lists the routes of the delivery log, test events and
// retries; they belong to the webhooks group (functions/webhooks).
func deliveriesRoutes(s *server, mux *http.ServeMux) {
	mux.Handle("POST /v1/webhook-endpoints/{endpoint_id}/test", s.doc1(s.testEndpoint))
	mux.Handle("GET /v1/webhook-endpoints/{endpoint_id}/deliveries", s.doc1(s.listDeliveries))
	mux.Handle("POST /v1/webhook-endpoints/{endpoint_id}/deliveries/{delivery_id}/retry", s.doc1(s.retryDelivery))
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
		CreatedAt: formatTime(d.CreatedAt), UpdatedAt: formatTime(d.UpdatedAt), Attempts: []attemptJSON{},
	}
	if d.Status == voiceops.DeliveryPending {
		out.NextAttemptAt = formatTimePtr(d.NextAttemptAt)
	}
	for _, a := range d.Attempts {
		aj := attemptJSON{Number: a.Number, At: formatTime(a.At), DurationMS: a.DurationMS}
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

func (s *server) testEndpoint(w http.ResponseWriter, r *http.Request, p voiceops.Principal) error {
	id, err := pathEndpointID(r)
	if err != nil {
		return err
	}
	ep, err := s.Stores.Endpoints.GetEndpoint(r.Context(), p.AccountID, id)
	if err != nil {
		return notFoundAs(err, "webhook endpoint")
	}
	e, d, err := s.Outbox.SendTest(r.Context(), ep)
	if err != nil {
		return notFoundAs(err, "webhook endpoint")
	}
	writeJSON(w, http.StatusAccepted, testJSON{EventID: e.ID, DeliveryID: d.ID})
	return nil
}

// Limits of GET .../deliveries.
const (
	defaultDeliveries = 50
	maxDeliveries     = 100
)

func (s *server) listDeliveries(w http.ResponseWriter, r *http.Request, p voiceops.Principal) error {
	id, err := pathEndpointID(r)
	if err != nil {
		return err
	}
	limit := defaultDeliveries
	if q := r.URL.Query(); q.Has("limit") {
		n, err := strconv.Atoi(q.Get("limit"))
		if err != nil || n < 1 || n > maxDeliveries {
			return badRequest("limit", "must be an integer between 1 and 100")
		}
		limit = n
	}
	if _, err := s.Stores.Endpoints.GetEndpoint(r.Context(), p.AccountID, id); err != nil {
		return notFoundAs(err, "webhook endpoint")
	}
	ds, err := s.Stores.Deliveries.ListDeliveries(r.Context(), p.AccountID, id, limit)
	if err != nil {
		return err
	}
	out := listJSON[deliveryJSON]{Data: make([]deliveryJSON, 0, len(ds))}
	for _, d := range ds {
		out.Data = append(out.Data, toDeliveryJSON(d))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *server) retryDelivery(w http.ResponseWriter, r *http.Request, p voiceops.Principal) error {
	id, err := pathEndpointID(r)
	if err != nil {
		return err
	}
	dlv := r.PathValue("delivery_id")
	if !voiceops.ValidDeliveryID(dlv) {
		return voiceops.Invalid(voiceops.FieldError{Field: "delivery_id", Message: "must match ^dlv_[A-Za-z0-9]+$"})
	}
	if len(dlv) > voiceops.MaxIDLength {
		return voiceops.Errorf(voiceops.KindNotFound, "delivery not found")
	}
	d, err := s.Outbox.Retry(r.Context(), p.AccountID, id, dlv)
	if err != nil {
		return notFoundAs(err, "delivery")
	}
	writeJSON(w, http.StatusAccepted, toDeliveryJSON(d))
	return nil
}
