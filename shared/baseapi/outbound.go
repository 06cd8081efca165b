package baseapi

import (
	"errors"
	"net/http"
	"time"

	"github.com/voiceops/opsapi/shared/httpapi"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// Outbound is outbound calling (functions/calls): trigger and status with
// a project's service key, and the internal route the telephony system
// moves a call's status with.
type Outbound struct {
	Calls voiceops.CallStore
	// ValidNumber says whether a to_number is a valid E.164 phone number
	// (shared/phone.Valid); injected so that only the function that
	// triggers calls links the phone-number library.
	ValidNumber func(string) bool
	Now         func() time.Time
}

// Routes lists the outbound calling routes (doc 2).
func (g *Outbound) Routes() []httpapi.Route {
	return []httpapi.Route{
		doc2("POST", "/v1/outbound-calling/trigger", httpapi.ServiceKey, g.outboundTrigger).Creates(),
		doc2("GET", "/v1/outbound-calling/{callSid}/status", httpapi.ServiceKey, g.outboundStatus),
		doc2("POST", "/internal/v1/outbound-calling/{callSid}/status", httpapi.InternalKey, g.outboundMove),
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
	CreatedAt   string `json:"created_at"`
	LastUpdated string `json:"last_updated"`
}

func toCallStatusJSON(c voiceops.Call) callStatusJSON {
	return callStatusJSON{CallSID: c.SID, Status: string(c.Status), CreatedAt: httpapi.Time(c.CreatedAt), LastUpdated: httpapi.Time(c.UpdatedAt)}
}

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
	meta, _ := o.JSONObject("metadata", true)
	if err := o.Done(); err != nil {
		return err
	}
	now := g.Now().UTC()
	c := voiceops.Call{SID: voiceops.NewCallSID(), AccountID: p.AccountID, ProjectID: p.ProjectID, ToNumber: to,
		Metadata: meta, Status: voiceops.CallQueued, CreatedAt: now, UpdatedAt: now}
	if err := g.Calls.CreateCall(r.Context(), c); err != nil {
		if errors.Is(err, voiceops.ErrAlreadyExists) {
			return voiceops.Internal(err) // 128 random bits never collide
		}
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
	c, err := g.Calls.GetCall(r.Context(), sid, g.Now())
	if errors.Is(err, voiceops.ErrNotFound) || (err == nil && (c.AccountID != p.AccountID || c.ProjectID != p.ProjectID)) {
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
	var to voiceops.CallStatus
	if v, ok := o.Str("status", true); ok {
		switch st := voiceops.CallStatus(v); st {
		case voiceops.CallCalling, voiceops.CallSuccess, voiceops.CallFailure:
			to = st
		default:
			o.Fail("status", "must be one of: calling, success, failure")
		}
	}
	if err := o.Done(); err != nil {
		return err
	}
	c, err := g.Calls.MoveCall(r.Context(), sid, to, g.Now().UTC())
	switch {
	case errors.Is(err, voiceops.ErrNotFound):
		return errCallUnknown
	case err != nil:
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, toCallStatusJSON(c))
	return nil
}
