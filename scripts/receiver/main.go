// Command receiver is a local webhook receiver for trying deliveries: it
// verifies both signature schemes of every request (Standard Webhooks with
// the official library, and the X-Service-Signature HMAC) and prints the
// event. Use it with the dev server's -allow-loopback-webhooks flag.
//
//	go run ./scripts/receiver -addr 127.0.0.1:9000 -secret whsec_... [-fail-first]
//	go run ./scripts/receiver -addr 127.0.0.1:9002 -kind slack|pagerduty
//
// With -kind slack or pagerduty it stands in for the vendor instead
// (kinds.go): it checks each payload against the vendor's pinned format.
package main

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

func main() {
	flag.Usage = func() {
		fmt.Fprint(flag.CommandLine.Output(), `Usage: go run ./scripts/receiver -secret whsec_... [flags]

A local webhook receiver for trying deliveries: it verifies both signature
schemes of every POST (Standard Webhooks and X-Service-Signature) with the
endpoint's signing secret and prints each event on a line, "verified ..."
or "REJECTED ..." (401). Events of a rule older than the last one printed
(by the event's alert.sequence; deliveries may arrive out of order) are
acknowledged and printed as ignored. A GET answers 200 and prints nothing, so that a
script can wait for it. Use it with the dev server's -allow-loopback-webhooks.

With -kind slack or -kind pagerduty it stands in for Slack's incoming
webhooks or PagerDuty's Events API: no secret; each POST is checked against
the vendor's format (shared/alerts/notify/vendorformat), printed "valid ..."
or "INVALID ..." (400), and answered as the vendor does (200 "ok"; 202).

Example:
  go run ./scripts/receiver -addr 127.0.0.1:9000 -secret "$SECRET" -fail-first
  go run ./scripts/receiver -addr 127.0.0.1:9002 -kind pagerduty

Flags:
`)
		flag.PrintDefaults()
	}
	addr := flag.String("addr", "127.0.0.1:9000", "`HOST:PORT` to listen on")
	secret := flag.String("secret", os.Getenv("SIGNING_SECRET"), "the endpoint's signing secret (whsec_...; default $SIGNING_SECRET)")
	failFirst := flag.Bool("fail-first", false, "answer 500 to the first attempt of each event (with -kind: the first request), to watch a retry")
	kind := flag.String("kind", "webhook", "what to receive: `webhook` (signed deliveries), slack or pagerduty (a stand-in for the vendor)")
	flag.Parse()
	var h http.Handler
	var err error
	if *kind != "webhook" {
		h, err = newStandIn(*kind, *failFirst, os.Stdout)
	} else {
		if !strings.HasPrefix(*secret, "whsec_") {
			fmt.Fprintln(os.Stderr, "receiver: -secret whsec_... is required (the signing_secret of the endpoint)")
			os.Exit(2)
		}
		h, err = newHandler(*secret, *failFirst, os.Stdout)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "receiver:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	srv := &http.Server{Addr: *addr, Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		_ = srv.Shutdown(context.Background())
	}()
	fmt.Printf("receiver: listening on http://%s/\n", *addr)
	if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintln(os.Stderr, "receiver:", err)
		os.Exit(1)
	}
}

// newHandler verifies and prints deliveries signed with secret.
func newHandler(secret string, failFirst bool, out io.Writer) (http.Handler, error) {
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		return nil, err
	}
	var mu sync.Mutex
	seen := map[string]bool{}
	// The last sequence number printed per rule: deliveries may arrive out
	// of order (a retry after a later event), and an older one is stale.
	last := map[string]int64{}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet || r.Method == http.MethodHead {
			// Readiness (scripts/waitfor): deliveries are POSTs.
			w.Header().Set("Content-Type", "text/plain")
			_, _ = io.WriteString(w, "receiver ready: POST deliveries here\n")
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil {
			http.Error(w, "cannot read body", http.StatusBadRequest)
			return
		}
		id := r.Header.Get("webhook-id")
		if err := Verify(wh, secret, body, r.Header); err != nil {
			fmt.Fprintf(out, "REJECTED %s: %v\n", id, err)
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		mu.Lock()
		first := !seen[id]
		seen[id] = true
		mu.Unlock()
		if failFirst && first {
			fmt.Fprintf(out, "verified %s, answering 500 to see a retry\n", id)
			http.Error(w, "try again", http.StatusInternalServerError)
			return
		}
		rule, seq := ruleSequence(body)
		mu.Lock()
		stale := seq > 0 && seq <= last[rule]
		prev := last[rule]
		if !stale && seq > 0 {
			last[rule] = seq
		}
		mu.Unlock()
		if stale {
			// Acknowledged (it was delivered) but not applied: the rule's
			// state has moved on since.
			fmt.Fprintf(out, "verified %s (both signatures), rule %s #%d: older than #%d, ignored\n", id, rule, seq, prev)
		} else {
			fmt.Fprintf(out, "verified %s (both signatures): %s\n", id, body)
		}
		w.WriteHeader(http.StatusNoContent)
	}), nil
}

// Verify checks both signature schemes of a delivery.
func Verify(wh *standardwebhooks.Webhook, secret string, body []byte, h http.Header) error {
	if err := wh.Verify(body, h); err != nil {
		return fmt.Errorf("webhook-signature: %w", err)
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(h.Get("X-Service-Timestamp") + "." + string(body)))
	want := hex.EncodeToString(mac.Sum(nil))
	for _, sig := range strings.Fields(h.Get("X-Service-Signature")) {
		if hmac.Equal([]byte(sig), []byte(want)) {
			return nil
		}
	}
	return errors.New("X-Service-Signature does not match")
}

// ruleSequence reads the rule and sequence number of an event body (0 when
// it has none: a test event).
func ruleSequence(body []byte) (string, int64) {
	var e struct {
		Alert struct {
			ID       string `json:"id"`
			Sequence int64  `json:"sequence"`
		} `json:"alert"`
	}
	if json.Unmarshal(body, &e) != nil {
		return "", 0
	}
	return e.Alert.ID, e.Alert.Sequence
}
