package main

import (
	"fmt"
	"io"
	"net/http"
	"sync"

	"github.com/voiceops/opsapi/shared/alerts/notify/vendorformat"
)

// newStandIn is a local stand-in for Slack's incoming webhooks or
// PagerDuty's Events API (-kind slack|pagerduty): it checks each POST
// against the vendor's format pinned in vendorformat and answers as the
// vendor does (Slack: 200 "ok"; PagerDuty: 202 with a status; a payload
// that fails the format: 400, as both do). Each line printed is "valid
// slack: <body>", "valid pagerduty <action> <dedup_key>: <body>" or
// "INVALID ...".
func newStandIn(kind string, failFirst bool, out io.Writer) (http.Handler, error) {
	if kind != "slack" && kind != "pagerduty" {
		return nil, fmt.Errorf("-kind %q: want webhook, slack or pagerduty", kind)
	}
	var mu sync.Mutex
	n := 0
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet || r.Method == http.MethodHead {
			_, _ = io.WriteString(w, "receiver ready: POST "+kind+" payloads here\n")
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil {
			http.Error(w, "cannot read body", http.StatusBadRequest)
			return
		}
		mu.Lock()
		n++
		first := n == 1
		mu.Unlock()
		if kind == "slack" {
			if err := vendorformat.ValidateSlack(body); err != nil {
				fmt.Fprintf(out, "INVALID slack: %v: %s\n", err, body)
				http.Error(w, "invalid_payload", http.StatusBadRequest)
				return
			}
			if failFirst && first {
				fmt.Fprintln(out, "valid slack, answering 500 to see a retry")
				http.Error(w, "try again", http.StatusInternalServerError)
				return
			}
			fmt.Fprintf(out, "valid slack: %s\n", body)
			_, _ = io.WriteString(w, "ok")
			return
		}
		e, err := vendorformat.ValidatePagerDuty(body)
		if err != nil {
			fmt.Fprintf(out, "INVALID pagerduty: %v: %s\n", err, body)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"status":"invalid event","message":"Event object is invalid"}`)
			return
		}
		if failFirst && first {
			fmt.Fprintln(out, "valid pagerduty, answering 500 to see a retry")
			http.Error(w, "try again", http.StatusInternalServerError)
			return
		}
		fmt.Fprintf(out, "valid pagerduty %s %s: %s\n", e.EventAction, e.DedupKey, body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusAccepted)
		fmt.Fprintf(w, `{"status":"success","message":"Event processed","dedup_key":%q}`, e.DedupKey)
	}), nil
}
