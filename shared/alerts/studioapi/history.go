package studioapi

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"sync"

	"github.com/voiceops/opsapi/shared/platform/httpapi"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// Limits of GET /v1/alert-rules/{rule_id}/history.
const defaultHistory = 20

// historyJSON is one state change of GET /v1/alert-rules/{rule_id}/history.
type historyJSON struct {
	At         string                `json:"at"`
	FromState  string                `json:"from_state"`
	ToState    string                `json:"to_state"`
	Value      *int64                `json:"value"`
	EventID    *string               `json:"event_id"`
	Silenced   bool                  `json:"silenced"`
	Deliveries []historyDeliveryJSON `json:"deliveries"`
}

// historyDeliveryJSON is the outcome of the change's event at one endpoint.
type historyDeliveryJSON struct {
	EndpointID string `json:"endpoint_id"`
	deliveryJSON
}

type historyPageJSON struct {
	Data   []historyJSON `json:"data"`
	Cursor *string       `json:"cursor"`
}

// ruleHistory answers a page of the rule's state changes, each with the
// deliveries of the event it sent to the account's current endpoints
// (a deleted endpoint's deliveries are no longer shown).
func (a *Alerts) ruleHistory(w http.ResponseWriter, r *http.Request, p httpapi.Caller) error {
	id, err := pathRuleID(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	limit := defaultHistory
	if q.Has("limit") {
		n, err := strconv.Atoi(q.Get("limit"))
		if err != nil || n < 1 || n > voiceops.MaxHistoryPage {
			return httpapi.BadRequest("limit", "must be an integer between 1 and 100")
		}
		limit = n
	}
	cursor := q.Get("cursor")
	if q.Has("cursor") {
		if _, _, ok := voiceops.ParseHistoryCursor(cursor); !ok {
			return httpapi.BadRequest("cursor", "must be the cursor of a previous page")
		}
	}
	// The rule, its history and the account's endpoints (whose deliveries
	// the changes show) are read at once: every key is of the caller's
	// account, and the history and endpoints are dropped unread unless the
	// rule is found there.
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	var (
		wg           sync.WaitGroup
		changes      []voiceops.StateChange
		next         string
		historyErr   error
		eps          []voiceops.WebhookEndpoint
		endpointsErr error
	)
	wg.Go(func() { changes, next, historyErr = a.History.RuleHistory(ctx, p.AccountID, id, cursor, limit) })
	wg.Go(func() { eps, endpointsErr = a.Endpoints.ListEndpoints(ctx, p.AccountID) })
	_, err = a.Service.Rules.GetRule(ctx, p.AccountID, id) // the store's own: its existence, no marks
	if err != nil {
		cancel()
	}
	wg.Wait()
	if err != nil {
		return httpapi.NotFoundAs(err, "alert rule")
	}
	if errors.Is(historyErr, voiceops.ErrInvalidCursor) {
		return httpapi.BadRequest("cursor", "must be the cursor of a previous page")
	}
	if historyErr != nil {
		return historyErr
	}
	byEvent, err := a.eventDeliveries(r, p.AccountID, changes, eps, endpointsErr)
	if err != nil {
		return err
	}
	out := historyPageJSON{Data: make([]historyJSON, 0, len(changes))}
	if next != "" {
		out.Cursor = &next
	}
	for _, c := range changes {
		h := historyJSON{At: httpapi.Time(c.At), FromState: string(c.From), ToState: string(c.To), Value: c.Value, Silenced: c.Silenced, Deliveries: []historyDeliveryJSON{}}
		if c.EventID != "" {
			ev := c.EventID
			h.EventID = &ev
			h.Deliveries = append(h.Deliveries, byEvent[ev]...)
		}
		out.Data = append(out.Data, h)
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

// eventDeliveries reads the deliveries of the changes' events to the
// account's endpoints eps (read with the history; epsErr the error of
// that read, which only matters when a change sent an event), by event
// ID, in the order of the endpoints.
func (a *Alerts) eventDeliveries(r *http.Request, accountID string, changes []voiceops.StateChange, eps []voiceops.WebhookEndpoint, epsErr error) (map[string][]historyDeliveryJSON, error) {
	var refs []voiceops.DeliveryRef
	for _, c := range changes {
		if c.EventID == "" {
			continue
		}
		if epsErr != nil {
			return nil, epsErr
		}
		for _, ep := range eps {
			refs = append(refs, voiceops.DeliveryRef{EndpointID: ep.ID, EventID: c.EventID})
		}
	}
	if len(refs) == 0 {
		return nil, nil
	}
	ds, err := a.History.GetDeliveries(r.Context(), accountID, refs)
	if err != nil {
		return nil, err
	}
	byEvent := map[string][]historyDeliveryJSON{}
	for _, ep := range eps {
		for _, d := range ds {
			if d.EndpointID == ep.ID {
				byEvent[d.EventID] = append(byEvent[d.EventID], historyDeliveryJSON{EndpointID: d.EndpointID, deliveryJSON: toDeliveryJSON(d)})
			}
		}
	}
	return byEvent, nil
}
