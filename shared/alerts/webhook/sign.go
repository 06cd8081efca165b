// Package webhook signs and sends one webhook delivery attempt, and says when
// the next attempt is due. It keeps no state: stores, queues and the delivery
// log live elsewhere.
package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// Signature header names, spelled as on the wire. Sign stores them in an
// http.Header under their canonical form (so Header.Get works); Send writes
// them with exactly this spelling.
const (
	HeaderID        = standardwebhooks.HeaderWebhookID        // "webhook-id"
	HeaderTimestamp = standardwebhooks.HeaderWebhookTimestamp // "webhook-timestamp"
	HeaderSignature = standardwebhooks.HeaderWebhookSignature // "webhook-signature"

	HeaderCompatID        = "X-Service-Event-ID"
	HeaderCompatTimestamp = "X-Service-Timestamp"
	HeaderCompatSignature = "X-Service-Signature"
)

// signatureHeaders lists every header Sign sets, in wire spelling.
var signatureHeaders = [...]string{
	HeaderID, HeaderTimestamp, HeaderSignature,
	HeaderCompatID, HeaderCompatTimestamp, HeaderCompatSignature,
}

const secretPrefix = "whsec_"

// Sign returns the signature headers of a delivery of body made at at, one
// signature per secret in each scheme:
//
//   - Standard Webhooks (computed by the official library): webhook-id,
//     webhook-timestamp and webhook-signature, "v1,<base64 HMAC-SHA256 of
//     id.timestamp.body>" keyed by the base64-decoded part after "whsec_".
//   - Compatibility: X-Service-Event-ID, X-Service-Timestamp and
//     X-Service-Signature, lowercase hex HMAC-SHA256 of "timestamp.body"
//     keyed by the whole secret string.
//
// Secrets must be "whsec_" followed by non-empty standard base64. Errors never
// contain a secret.
func Sign(eventID string, at time.Time, body []byte, secrets []string) (http.Header, error) {
	if eventID == "" {
		return nil, errors.New("webhook: empty event ID")
	}
	if len(secrets) == 0 {
		return nil, errors.New("webhook: no signing secret")
	}
	ts := strconv.FormatInt(at.Unix(), 10)
	std := make([]string, 0, len(secrets))
	compat := make([]string, 0, len(secrets))
	for i, secret := range secrets {
		if !strings.HasPrefix(secret, secretPrefix) || len(secret) == len(secretPrefix) {
			return nil, fmt.Errorf("webhook: signing secret %d is not %q followed by base64", i+1, secretPrefix)
		}
		wh, err := standardwebhooks.NewWebhook(secret)
		if err != nil {
			// The library's error quotes no secret bytes, but keep ours fixed.
			return nil, fmt.Errorf("webhook: signing secret %d is not %q followed by base64", i+1, secretPrefix)
		}
		sig, err := wh.Sign(eventID, at, body)
		if err != nil {
			return nil, fmt.Errorf("webhook: signing with secret %d failed", i+1)
		}
		std = append(std, sig)

		mac := hmac.New(sha256.New, []byte(secret))
		mac.Write([]byte(ts))
		mac.Write([]byte{'.'})
		mac.Write(body)
		compat = append(compat, hex.EncodeToString(mac.Sum(nil)))
	}
	h := make(http.Header, len(signatureHeaders))
	h.Set(HeaderID, eventID)
	h.Set(HeaderTimestamp, ts)
	h.Set(HeaderSignature, strings.Join(std, " "))
	h.Set(HeaderCompatID, eventID)
	h.Set(HeaderCompatTimestamp, ts)
	h.Set(HeaderCompatSignature, strings.Join(compat, " "))
	return h, nil
}
