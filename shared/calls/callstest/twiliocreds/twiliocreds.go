// Package twiliocreds is a fixed set of Twilio accounts for tests (the
// twilio.Credentials a provider or callback group reads). It is apart from
// twiliofake so that shared/calls/telephony/twilio's own tests can use that one
// without an import cycle.
package twiliocreds

import (
	"context"

	"github.com/voiceops/opsapi/shared/calls/telephony/twilio"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// Static maps an account ID to its Twilio account.
type Static map[string]twilio.Account

// Twilio returns the account's Twilio account; ErrNotFound when it has none.
func (s Static) Twilio(_ context.Context, accountID string) (twilio.Account, error) {
	a, ok := s[accountID]
	if !ok {
		return twilio.Account{}, voiceops.ErrNotFound
	}
	return a, nil
}
