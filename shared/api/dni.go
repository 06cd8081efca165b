package api

import (
	"encoding/json"
	"net/http"

	"github.com/voiceops/opsapi/shared/auth"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// dniRoutes lists the route of DNI reservations (DECISIONS.md, DNI;
// functions/calls).
func dniRoutes(s *server, mux *http.ServeMux) {
	mux.Handle("POST /v1/conversations/dni-reservation", s.doc2(s.dniReserve))
}

// maxDNIAttributesBytes bounds the JSON of a reservation's attributes: they
// are stored with the number, then with the conversation of the call.
const maxDNIAttributesBytes = 64 << 10

var errProjectKeyRequired = voiceops.Errorf(voiceops.KindForbidden, "a project-scoped key is required")

type dniReservationJSON struct {
	DNI       string `json:"dni"`
	ExpiresAt string `json:"expires_at"`
}

// dniReserve reserves a free number of the key's project. The path names no
// project, so the x-api-key must be scoped to one: an account-scoped key is
// 403.
func (s *server) dniReserve(w http.ResponseWriter, r *http.Request) error {
	p, err := s.Auth.Authenticate(r.Context(), r.Header.Get("x-api-key"), voiceops.KeyAPI)
	if err != nil {
		if voiceops.KindOf(err) == voiceops.KindUnauthorized {
			return auth.Unauthorized("API key")
		}
		return err
	}
	if p.ProjectID == "" {
		return errProjectKeyRequired
	}
	o, err := readObject(w, r, false)
	if err != nil {
		return err
	}
	raw, sent := o.take("attributes", true, false)
	var attrs map[string]any
	if sent {
		switch {
		case raw[0] != '{' || json.Unmarshal(raw, &attrs) != nil:
			o.fail("attributes", "must be an object")
		case len(raw) > maxDNIAttributesBytes:
			o.fail("attributes", "must be at most 65536 bytes of JSON")
		}
	}
	if err := o.done(); err != nil {
		return err
	}
	if s.DNI == nil {
		return voiceops.Errorf(voiceops.KindInternal, "no DNI store")
	}
	number, expires, err := s.DNI.Reserve(r.Context(), p.AccountID, p.ProjectID, attrs, s.Now())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, dniReservationJSON{DNI: number, ExpiresAt: formatTime(expires)})
	return nil
}
