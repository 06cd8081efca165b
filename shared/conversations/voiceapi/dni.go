package voiceapi

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/voiceops/opsapi/shared/platform/httpapi"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// DNI is the DNI reservation route (docs/outbound-calls.md, DNI; functions/calls).
// The path names no project, so the x-api-key must be scoped to one: an
// account-scoped key is 403.
type DNI struct {
	Pools voiceops.DNIStore
	Now   func() time.Time
}

// Routes lists the DNI route.
func (g *DNI) Routes() []httpapi.Route {
	return []httpapi.Route{httpapi.BaseRoute("POST", "/v1/conversations/dni-reservation", httpapi.ProjectScopedKey, g.dniReserve).Creates()}
}

type dniReservationJSON struct {
	DNI       string `json:"dni"`
	ExpiresAt string `json:"expires_at"`
}

// dniReserve reserves a free number of the key's project. The path names no
// project, so the x-api-key must be scoped to one: an account-scoped key is
// 403.
func (g *DNI) dniReserve(w http.ResponseWriter, r *http.Request, p httpapi.Caller) error {
	o, err := httpapi.ReadObject(w, r, false)
	if err != nil {
		return err
	}
	raw, sent := o.Take("attributes", true, false)
	var attrs map[string]any
	if sent {
		switch {
		case raw[0] != '{' || json.Unmarshal(raw, &attrs) != nil:
			o.Fail("attributes", "must be an object")
		case len(raw) > voiceops.MaxDNIAttributesBytes:
			o.Fail("attributes", voiceops.SizeMessage(len(raw), voiceops.MaxDNIAttributesBytes))
		}
	}
	if err := o.Done(); err != nil {
		return err
	}
	number, expires, err := g.Pools.Reserve(r.Context(), p.AccountID, p.ProjectID, attrs, g.Now())
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, dniReservationJSON{DNI: number, ExpiresAt: httpapi.Time(expires)})
	return nil
}
