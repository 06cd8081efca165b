package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/voiceops/opsapi/shared/calls/callstest/twiliofake"
	"github.com/voiceops/opsapi/shared/calls/telephony/twilio"
)

// The telephony modes (-telephony).
const (
	// telephonyStandIn places calls with a local Twilio stand-in the runner
	// starts: no Twilio account is needed, and the dev server's test
	// numbers behave as with its simulator.
	telephonyStandIn = "standin"
	// telephonyTwilio places calls with Twilio (or -twilio-api-url), with
	// the accounts the operator set (opsctl twilio set).
	telephonyTwilio = "twilio"
)

// standInRing is how long a stand-in call rings before it is answered, as
// the dev server's simulator rings.
const standInRing = 1500 * time.Millisecond

// standInOutcomes are the test numbers' outcomes (README, "Test numbers"):
// the status Twilio reports for a call to a number of that ending.
var standInOutcomes = map[string]string{"0001": "busy", "0002": "no-answer", "0003": "failed"}

// startStandIn serves the Twilio stand-in on a free port until ctx ends
// and returns its API base URL. Each call it is asked to place is played
// as Twilio would, signed callbacks to the calls routes: a test number's
// failure, or ringing, the answer, one turn ("balance", a line the demo
// agent understands) and the end.
func startStandIn(ctx context.Context, log *slog.Logger) (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	api := &twiliofake.API{Placed: func(created url.Values) { playStandIn(ctx, created, log) }}
	srv := &http.Server{Handler: api, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	go func() { <-ctx.Done(); _ = srv.Close() }()
	return "http://" + ln.Addr().String(), nil
}

func playStandIn(ctx context.Context, created url.Values, log *slog.Logger) {
	to := created.Get("To")
	for suffix, status := range standInOutcomes {
		if strings.HasSuffix(to, suffix) {
			u := created.Get("StatusCallback")
			form := twiliofake.CallbackForm(created, "CallStatus", status)
			if _, _, err := twiliofake.Post(u, form, twiliofake.Sign(twiliofake.AuthToken, u, form)); err != nil {
				log.Error("telephony stand-in", "to", to, "err", err)
			}
			return
		}
	}
	select {
	case <-ctx.Done():
		return
	case <-time.After(standInRing):
	}
	if _, err := twiliofake.PlayCall(created, "balance"); err != nil {
		log.Error("telephony stand-in", "to", to, "err", err)
	}
}

// standInAccount is the Twilio account every demo account uses with the
// stand-in.
var standInAccount = twilio.Account{AccountSID: twiliofake.AccountSID, AuthToken: twiliofake.AuthToken, FromNumber: twiliofake.FromNumber}

// setStandInAccounts gives each account the stand-in's Twilio account in
// the functions' Twilio secret, as an operator does with opsctl.
func setStandInAccounts(ctx context.Context, sm twilio.SecretsWriter, secretID string, accounts []string) error {
	for _, a := range accounts {
		if err := twilio.SetAccount(ctx, sm, secretID, a, standInAccount); err != nil {
			return fmt.Errorf("the stand-in's Twilio account for %s: %w", a, err)
		}
	}
	return nil
}
