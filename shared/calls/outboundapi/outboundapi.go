// Package outboundapi serves outbound calling on the base host (the base host):
// trigger, status, and the internal route the telephony system moves a
// call's status with. It is a package of its own, apart from the groups that run conversations,
// so that functions/outbound links the calls service and not the
// conversation engine, agents and hooks the other base-host groups run
// (functions/outbound is near its bundle cap; scripts/checklinks).
package outboundapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/voiceops/opsapi/shared/calls"
	"github.com/voiceops/opsapi/shared/platform/httpapi"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// Outbound is outbound calling (functions/calls): trigger and status with
// a project's service key, and the internal route the telephony system
// moves a call's status with.
type Outbound struct {
	// Calls is the calls service (it queues each triggered call for the
	// dialer, functions/dialer).
	Calls *calls.Service
	// ValidNumber says whether a to_number is a valid E.164 phone number
	// (shared/calls/phone.Valid); injected so that only the function that
	// triggers calls links the phone-number library.
	ValidNumber func(string) bool
	// ValidCountry says whether a country_code is an ISO 3166-1 alpha-2
	// code (shared/calls/phone.ValidCountry: libphonenumber's regions).
	ValidCountry func(string) bool
	// Destinations refuses the numbers the account may not call
	// (shared/calls/destination.Checker).
	Destinations Destinations
}

// Destinations decides whether an account may call a valid number: nil, or
// a 400 naming why not (shared/calls/destination.Checker).
type Destinations interface {
	Check(ctx context.Context, accountID, toNumber string) error
}

// Routes lists the outbound calling routes (the base host).
func (g *Outbound) Routes() []httpapi.Route {
	return []httpapi.Route{
		{Method: "POST", Path: "/v1/outbound-calling/trigger", Family: httpapi.BaseErrors, Auth: httpapi.ServiceKey, Handle: g.outboundTrigger, Create: true},
		{Method: "GET", Path: "/v1/outbound-calling/{callSid}/status", Family: httpapi.BaseErrors, Auth: httpapi.ServiceKey, Handle: g.outboundStatus},
		{Method: "POST", Path: "/internal/v1/outbound-calling/{callSid}/status", Family: httpapi.BaseErrors, Auth: httpapi.InternalKey, Handle: g.outboundMove},
	}
}

var (
	errCallSID     = voiceops.Errorf(voiceops.KindBadRequest, "invalid call SID format: want CA followed by 32 lowercase hexadecimal digits")
	errCallUnknown = voiceops.Errorf(voiceops.KindNotFound, "call not found (unknown, or more than 2 hours since the call ended)")
)

type callSIDJSON struct {
	CallSID string `json:"callSid"`
}

type callStatusJSON struct {
	CallSID     string `json:"callSid"`
	Status      string `json:"status"`
	Reason      string `json:"reason,omitempty"`
	CreatedAt   string `json:"created_at"`
	LastUpdated string `json:"last_updated"`
}

func toCallStatusJSON(c voiceops.Call) callStatusJSON {
	return callStatusJSON{CallSID: c.SID, Status: string(c.Status), Reason: c.Reason, CreatedAt: httpapi.Time(c.CreatedAt), LastUpdated: httpapi.Time(c.UpdatedAt)}
}

// readMetadata reads the trigger's metadata: an object of strings (null is
// absent), at most voiceops.MetadataMaxBytes as compact JSON.
func readMetadata(o *httpapi.Object) map[string]any {
	raw, ok := o.Take("metadata", false, true)
	if !ok || httpapi.IsNull(raw) {
		return nil
	}
	var vals map[string]json.RawMessage
	if raw[0] != '{' || json.Unmarshal(raw, &vals) != nil {
		o.Fail("metadata", "must be an object")
		return nil
	}
	m := make(map[string]any, len(vals))
	for k, v := range vals {
		var s string
		if len(v) == 0 || v[0] != '"' || json.Unmarshal(v, &s) != nil {
			o.Fail("metadata", "values must be strings (metadata."+k+" is not)")
			return nil
		}
		m[k] = s
	}
	if b, _ := json.Marshal(m); len(b) > voiceops.MetadataMaxBytes {
		o.Fail("metadata", fmt.Sprintf("must be at most %d bytes encoded as JSON (26 KB), got %d", voiceops.MetadataMaxBytes, len(b)))
		return nil
	}
	return m
}

// maxEncryptionLen bounds the free-form encryption field.
const maxEncryptionLen = 256

// outboundTrigger is POST /v1/outbound-calling/trigger: the call is stored
// queued for the service key's project and its SID returned.
func (g *Outbound) outboundTrigger(w http.ResponseWriter, r *http.Request, p httpapi.Caller) error {
	o, err := httpapi.ReadObject(w, r, false)
	if err != nil {
		return err
	}
	to, ok := o.Str("to_number", true)
	if ok && !g.ValidNumber(to) {
		o.Fail("to_number", "must be a valid phone number in E.164 format, such as +14155550123")
	}
	meta := readMetadata(o)
	enc, _ := o.Str("encryption", false)
	if len(enc) > maxEncryptionLen {
		o.Fail("encryption", fmt.Sprintf("must be at most %d characters", maxEncryptionLen))
	}
	cc, ok := o.Str("country_code", false)
	if ok && !g.ValidCountry(cc) {
		o.Fail("country_code", "must be an ISO 3166-1 alpha-2 country code in capitals, such as GB")
	}
	if err := o.Done(); err != nil {
		return err
	}
	if err := g.Destinations.Check(r.Context(), p.AccountID, to); err != nil {
		return err
	}
	c, err := g.Calls.Trigger(r.Context(), voiceops.Call{AccountID: p.AccountID, ProjectID: p.ProjectID, ToNumber: to,
		Metadata: meta, Encryption: enc, CountryCode: cc})
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, callSIDJSON{CallSID: c.SID})
	return nil
}

// outboundStatus is GET /v1/outbound-calling/{callSid}/status. A call of
// another project, like an expired one, is 404.
func (g *Outbound) outboundStatus(w http.ResponseWriter, r *http.Request, p httpapi.Caller) error {
	sid := r.PathValue("callSid")
	if !voiceops.ValidCallSID(sid) {
		return errCallSID
	}
	c, err := g.Calls.Status(r.Context(), p.AccountID, p.ProjectID, sid)
	if errors.Is(err, voiceops.ErrNotFound) {
		return errCallUnknown
	}
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, toCallStatusJSON(c))
	return nil
}

// outboundMove is POST /internal/v1/outbound-calling/{callSid}/status: the
// telephony system moves a call (queued→calling, calling→success|failure;
// anything else 409).
func (g *Outbound) outboundMove(w http.ResponseWriter, r *http.Request, _ httpapi.Caller) error {
	sid := r.PathValue("callSid")
	if !voiceops.ValidCallSID(sid) {
		return errCallSID
	}
	o, err := httpapi.ReadObject(w, r, false)
	if err != nil {
		return err
	}
	status, sent := o.Str("status", true)
	reason, hasReason := o.Str("reason", false)
	to, reason, errs := voiceops.CheckCallMove(status, sent, reason, hasReason)
	o.FailAll(errs...)
	if err := o.Done(); err != nil {
		return err
	}
	c, err := g.Calls.Move(r.Context(), sid, to, reason)
	switch {
	case errors.Is(err, voiceops.ErrNotFound):
		return errCallUnknown
	case err != nil:
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, toCallStatusJSON(c))
	return nil
}
