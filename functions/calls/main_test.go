package main

import (
	"context"
	"testing"

	"github.com/voiceops/opsapi/shared/calls/telephony/twilio"
	"github.com/voiceops/opsapi/shared/platform/httpapi"
	"github.com/voiceops/opsapi/shared/testsupport/samples"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// TestReplayEvents sends every calls-*.json of events/ through the real
// Lambda handler, so the samples that SAM users invoke never rot.
func TestReplayEvents(t *testing.T) {
	want := map[string]int{
		"calls-start.json":           200,
		"calls-turn.json":            200,
		"calls-end.json":             200,
		"calls-dni-reservation.json": 200,
		// Twilio's status callback of the sample call, signed with the
		// sample Twilio account's token for the sample API's URL.
		"calls-twilio-status.json": 204,
	}
	samples.ReplayHTTP(t, "calls-", want, func(t *testing.T, m *samples.Memory) samples.Lambda {
		platform := m.HTTP()
		platform.InternalKey = httpapi.FixedDigest(m.InternalKeyDigest)
		return handler(deps{HTTP: platform, Engine: m.Engine, Pools: m.Store.DNI(), Calls: m.Calls,
			Twilio: sampleTwilio{}, PublicURL: "https://base123.execute-api.us-east-1.amazonaws.com"})
	})
}

// sampleTwilio is the samples' Twilio account (its token signed
// events/calls-twilio-status.json).
type sampleTwilio struct{}

func (sampleTwilio) Twilio(_ context.Context, accountID string) (twilio.Account, error) {
	if accountID != samples.AccountID {
		return twilio.Account{}, voiceops.ErrNotFound
	}
	return twilio.Account{AccountSID: "AC0123456789abcdef0123456789abcdef", AuthToken: "9f8e7d6c5b4a39281706f5e4d3c2b1a0", FromNumber: "+15005550006"}, nil
}
