package api

import (
	"errors"
	"net/http"
	"regexp"

	"github.com/nyaruka/phonenumbers"

	"github.com/voiceops/opsapi/shared/voiceops"
)

// outboundRoutes lists the outbound calling routes (doc 2; functions/calls):
// trigger and status, authenticated with a project's service key in
// X-Service-Auth-Token, and the internal route the telephony system moves a
// call's status with (X-Internal-Key).
func outboundRoutes(s *server, mux *http.ServeMux) {
	mux.Handle("POST /v1/outbound-calling/trigger", s.doc2(s.outboundTrigger))
	mux.Handle("GET /v1/outbound-calling/{callSid}/status", s.doc2(s.outboundStatus))
	mux.Handle("POST /internal/v1/outbound-calling/{callSid}/status", s.internalDoc2(s.outboundMove))
}

var (
	errServiceKey  = voiceops.Errorf(voiceops.KindUnauthorized, "missing or invalid X-Service-Auth-Token (a service key is required)")
	errCallSID     = voiceops.Errorf(voiceops.KindBadRequest, "invalid call SID format: want CA followed by 32 lowercase hexadecimal digits")
	errCallUnknown = voiceops.Errorf(voiceops.KindNotFound, "call not found (unknown, or more than 2 hours since the call ended)")
	errNoCallStore = errors.New("no call store configured")
)

// outboundE164Pattern is the shape of an E.164 number: '+', then 2 to 15 digits,
// the first not 0. ValidE164 also asks the phone-number library.
var outboundE164Pattern = regexp.MustCompile(`^\+[1-9][0-9]{1,14}$`)

// ValidE164 reports whether n is a valid phone number written in E.164
// (with its '+'): the shape, then libphonenumber's parse and validity check
// (a number of a known country with an assigned length and prefix).
func ValidE164(n string) bool {
	if !outboundE164Pattern.MatchString(n) {
		return false
	}
	num, err := phonenumbers.Parse(n, "")
	if err != nil || !phonenumbers.IsValidNumber(num) {
		return false
	}
	return phonenumbers.Format(num, phonenumbers.E164) == n
}

// serviceKey authenticates the service key (X-Service-Auth-Token) of a
// request. Service keys always belong to one project.
func (s *server) serviceKey(r *http.Request) (voiceops.Principal, error) {
	p, err := s.Auth.Authenticate(r.Context(), r.Header.Get("X-Service-Auth-Token"), voiceops.KeyService)
	if err != nil {
		if voiceops.KindOf(err) == voiceops.KindUnauthorized {
			return p, errServiceKey
		}
		return p, err
	}
	if p.ProjectID == "" {
		return p, errServiceKey
	}
	return p, nil
}

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
	return callStatusJSON{CallSID: c.SID, Status: string(c.Status), CreatedAt: formatTime(c.CreatedAt), LastUpdated: formatTime(c.UpdatedAt)}
}

// outboundTrigger is POST /v1/outbound-calling/trigger: the call is stored
// queued for the service key's project and its SID returned.
func (s *server) outboundTrigger(w http.ResponseWriter, r *http.Request) error {
	p, err := s.serviceKey(r)
	if err != nil {
		return err
	}
	if s.Calls == nil {
		return voiceops.Internal(errNoCallStore)
	}
	o, err := readObject(w, r, false)
	if err != nil {
		return err
	}
	to, ok := o.str("to_number", true)
	if ok && !ValidE164(to) {
		o.fail("to_number", "must be a valid phone number in E.164 format, such as +14155550123")
	}
	meta, _ := o.jsonObject("metadata", true)
	if err := o.done(); err != nil {
		return err
	}
	now := s.Now().UTC()
	c := voiceops.Call{SID: voiceops.NewCallSID(), AccountID: p.AccountID, ProjectID: p.ProjectID, ToNumber: to,
		Metadata: meta, Status: voiceops.CallQueued, CreatedAt: now, UpdatedAt: now}
	if err := s.Calls.CreateCall(r.Context(), c); err != nil {
		if errors.Is(err, voiceops.ErrAlreadyExists) {
			return voiceops.Internal(err) // 128 random bits never collide
		}
		return err
	}
	writeJSON(w, http.StatusOK, callSIDJSON{CallSID: c.SID})
	return nil
}

// outboundStatus is GET /v1/outbound-calling/{callSid}/status. A call of
// another project, like an expired one, is 404.
func (s *server) outboundStatus(w http.ResponseWriter, r *http.Request) error {
	p, err := s.serviceKey(r)
	if err != nil {
		return err
	}
	sid := r.PathValue("callSid")
	if !voiceops.ValidCallSID(sid) {
		return errCallSID
	}
	if s.Calls == nil {
		return voiceops.Internal(errNoCallStore)
	}
	c, err := s.Calls.GetCall(r.Context(), sid, s.Now())
	if errors.Is(err, voiceops.ErrNotFound) || (err == nil && (c.AccountID != p.AccountID || c.ProjectID != p.ProjectID)) {
		return errCallUnknown
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, toCallStatusJSON(c))
	return nil
}

// outboundMove is POST /internal/v1/outbound-calling/{callSid}/status: the
// telephony system moves a call (queued→calling, calling→success|failure;
// anything else 409).
func (s *server) outboundMove(w http.ResponseWriter, r *http.Request) error {
	sid := r.PathValue("callSid")
	if !voiceops.ValidCallSID(sid) {
		return errCallSID
	}
	if s.Calls == nil {
		return voiceops.Internal(errNoCallStore)
	}
	o, err := readObject(w, r, false)
	if err != nil {
		return err
	}
	var to voiceops.CallStatus
	if v, ok := o.str("status", true); ok {
		switch st := voiceops.CallStatus(v); st {
		case voiceops.CallCalling, voiceops.CallSuccess, voiceops.CallFailure:
			to = st
		default:
			o.fail("status", "must be one of: calling, success, failure")
		}
	}
	if err := o.done(); err != nil {
		return err
	}
	c, err := s.Calls.MoveCall(r.Context(), sid, to, s.Now().UTC())
	switch {
	case errors.Is(err, voiceops.ErrNotFound):
		return errCallUnknown
	case err != nil:
		return err
	}
	writeJSON(w, http.StatusOK, toCallStatusJSON(c))
	return nil
}
