package calls_test

import (
	"context"
	"slices"
	"testing"
	"time"

	callsvc "github.com/voiceops/opsapi/shared/calls"
	"github.com/voiceops/opsapi/shared/calls/telephony"
	"github.com/voiceops/opsapi/shared/platform/telemetry"
	"github.com/voiceops/opsapi/shared/store/memory"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// TestReport: reports arrive repeated and out of order; only the first
// terminal one counts, and a terminal report may overtake the dialer's
// own queued→calling write.
func TestReport(t *testing.T) {
	t0 := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name       string
		calling    bool // the dialer's claim landed first
		reports    []telephony.Status
		want       voiceops.CallStatus
		wantReason string
		wantDials  []string // the Dials counts, "outcome/reason"
	}{
		{"answered", true, []telephony.Status{"initiated", "ringing", "in-progress", "completed"}, voiceops.CallSuccess, "", []string{"ended/completed"}},
		{"busy", true, []telephony.Status{"ringing", "busy"}, voiceops.CallFailure, "busy", []string{"ended/busy"}},
		{"no-answer then late ringing", true, []telephony.Status{"no-answer", "ringing", "in-progress"}, voiceops.CallFailure, "no-answer", []string{"ended/no-answer"}},
		{"canceled", true, []telephony.Status{"canceled"}, voiceops.CallFailure, "canceled", []string{"ended/canceled"}},
		{"duplicate completed, then failed", true, []telephony.Status{"completed", "completed", "failed"}, voiceops.CallSuccess, "", []string{"ended/completed"}},
		{"unknown status ignored", true, []telephony.Status{"weird"}, voiceops.CallCalling, "", nil},
		{"failed overtakes the claim", false, []telephony.Status{"failed"}, voiceops.CallFailure, "failed", []string{"ended/failed"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			calls := memory.NewCalls()
			at := t0
			var dials dialCounts
			svc := callsvc.New(calls, func() time.Time { return at }, callsvc.WithTelemetry(&dials))
			c := voiceops.Call{SID: voiceops.NewCallSID(), AccountID: "acct_a", ProjectID: "proj_a", ToNumber: "+14155550100",
				Status: voiceops.CallQueued, CreatedAt: t0, UpdatedAt: t0}
			if err := calls.CreateCall(ctx, c); err != nil {
				t.Fatal(err)
			}
			if tc.calling {
				if _, err := calls.MoveCall(ctx, c.SID, voiceops.CallCalling, "", t0); err != nil {
					t.Fatal(err)
				}
			}
			var got voiceops.Call
			for i, r := range tc.reports {
				var err error
				at = t0.Add(time.Duration(i+1) * time.Second)
				if got, err = svc.Report(ctx, c.SID, r); err != nil {
					t.Fatalf("report %s: %v", r, err)
				}
			}
			if got.Status != tc.want || got.Reason != tc.wantReason {
				t.Errorf("after %v: %s %q, want %s %q", tc.reports, got.Status, got.Reason, tc.want, tc.wantReason)
			}
			if !slices.Equal(dials, tc.wantDials) {
				t.Errorf("after %v: Dials counted %v, want %v", tc.reports, dials, tc.wantDials)
			}
		})
	}
	svc := callsvc.New(memory.NewCalls(), time.Now)
	if _, err := svc.Report(context.Background(), voiceops.NewCallSID(), "completed"); err != voiceops.ErrNotFound {
		t.Errorf("unknown call: %v", err)
	}
}

// dialCounts records the Dials counts as "outcome/reason".
type dialCounts []string

func (d *dialCounts) Record(m telemetry.Metric, v float64, dims ...string) {
	if m.Name == telemetry.Dials.Name {
		for range int(v) {
			*d = append(*d, dims[0]+"/"+dims[1])
		}
	}
}
