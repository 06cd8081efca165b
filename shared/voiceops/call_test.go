package voiceops

import (
	"reflect"
	"testing"
)

// TestCheckCallMove: a move that another telephony system asks for goes
// only where the state machine leads (CallPredecessor), a reason only with
// a failure and only one of CallReasons, and a failure without one records
// ReasonFailed.
func TestCheckCallMove(t *testing.T) {
	for _, tc := range []struct {
		name      string
		status    string
		sent      bool
		reason    string
		hasReason bool
		to        CallStatus
		recorded  string
		errFields []string
	}{
		{"calling", "calling", true, "", false, CallCalling, "", nil},
		{"success", "success", true, "", false, CallSuccess, "", nil},
		{"failure without a reason", "failure", true, "", false, CallFailure, ReasonFailed, nil},
		{"failure with a reason", "failure", true, ReasonBusy, true, CallFailure, ReasonBusy, nil},
		{"queued is no move's target", "queued", true, "", false, "", "", []string{"status"}},
		{"unknown status", "ringing", true, "", false, "", "", []string{"status"}},
		{"reason without failure", "success", true, ReasonBusy, true, CallSuccess, ReasonBusy, []string{"reason"}},
		{"unknown reason", "failure", true, "voicemail", true, CallFailure, "voicemail", []string{"reason"}},
		{"no status, a reason", "", false, ReasonBusy, true, "", ReasonBusy, []string{"reason"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			to, reason, errs := CheckCallMove(tc.status, tc.sent, tc.reason, tc.hasReason)
			var fields []string
			for _, e := range errs {
				fields = append(fields, e.Field)
			}
			if to != tc.to || (errs == nil && reason != tc.recorded) || !reflect.DeepEqual(fields, tc.errFields) {
				t.Errorf("CheckCallMove = %q, %q, %v; want %q, %q, errors on %v", to, reason, errs, tc.to, tc.recorded, tc.errFields)
			}
		})
	}
	if got, want := CallMoveTargets(), []CallStatus{CallCalling, CallSuccess, CallFailure}; !reflect.DeepEqual(got, want) {
		t.Errorf("CallMoveTargets() = %v, want %v", got, want)
	}
}
