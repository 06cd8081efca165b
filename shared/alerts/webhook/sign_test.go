package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

const (
	// The Standard Webhooks specification's published test vector.
	kaSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	kaID     = "msg_p5jXN8AQM9LWM0D4loKWxJek"
	kaTS     = 1614265330
	kaBody   = `{"test": 2432232314}`
	// A second secret: whsec_ + base64 of the bytes 0..31.
	kaSecret2 = "whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="
)

// TestSignKnownAnswer checks every header against values computed outside Go
// (Python's hmac module) for two secrets.
func TestSignKnownAnswer(t *testing.T) {
	h, err := Sign(kaID, time.Unix(kaTS, 0), []byte(kaBody), []string{kaSecret, kaSecret2})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"webhook-id":          kaID,
		"webhook-timestamp":   "1614265330",
		"webhook-signature":   "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE= v1,O4Gjv1HqPqsMrjmczoggs/sWA8gZD0VyHG+fLh4+ktI=",
		"X-Service-Event-ID":  kaID,
		"X-Service-Timestamp": "1614265330",
		"X-Service-Signature": "2e37df5d4a028c51a7f3133d64ae1e300d2c2c900f1b1d49d4369ad2530f8964 " +
			"8dbc842b6599c1be049900723cebba01cdec937f060d8d59fd18e8efade1dbb7",
	}
	for name, v := range want {
		if got := h.Get(name); got != v {
			t.Errorf("%s = %q, want %q", name, got, v)
		}
	}
	if len(h) != len(want) {
		t.Errorf("Sign returned %d headers, want exactly %d: %v", len(h), len(want), h)
	}
}

// TestSignVerifiesWithLibrary: a multi-signature header verifies with each
// secret separately, and not with any other secret or body.
func TestSignVerifiesWithLibrary(t *testing.T) {
	body := []byte(`{"event_type":"alerts.triggered","event_id":"evt_1"}`)
	secrets := []string{kaSecret, kaSecret2}
	h, err := Sign("evt_1", time.Now(), body, secrets)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range secrets {
		wh, err := standardwebhooks.NewWebhook(s)
		if err != nil {
			t.Fatal(err)
		}
		if err := wh.Verify(body, h); err != nil {
			t.Errorf("secret %d: Verify: %v", i+1, err)
		}
		if err := wh.Verify(append([]byte(nil), append(body, ' ')...), h); !errors.Is(err, standardwebhooks.ErrNoMatchingSignature) {
			t.Errorf("secret %d: tampered body verified: %v", i+1, err)
		}
	}
	other, _ := standardwebhooks.NewWebhook("whsec_" + strings.Repeat("A", 43) + "=")
	if err := other.Verify(body, h); !errors.Is(err, standardwebhooks.ErrNoMatchingSignature) {
		t.Errorf("an unrelated secret verified: %v", err)
	}
}

// TestSignCompatibility recomputes the X-Service-* signature with crypto/hmac.
func TestSignCompatibility(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 999_000_000, time.UTC) // sub-second part is dropped
	body := []byte("{\"a\":\"\u00e9\\n\"}\n")                    // exact bytes, trailing newline kept
	secrets := []string{kaSecret2, kaSecret}
	h, err := Sign("evt_2", at, body, secrets)
	if err != nil {
		t.Fatal(err)
	}
	ts := strconv.FormatInt(at.Unix(), 10)
	if h.Get(HeaderCompatTimestamp) != ts || h.Get(HeaderTimestamp) != ts {
		t.Fatalf("timestamps %q/%q, want %q", h.Get(HeaderCompatTimestamp), h.Get(HeaderTimestamp), ts)
	}
	if h.Get(HeaderCompatID) != "evt_2" || h.Get(HeaderID) != "evt_2" {
		t.Fatalf("ids %q/%q", h.Get(HeaderCompatID), h.Get(HeaderID))
	}
	got := strings.Split(h.Get(HeaderCompatSignature), " ")
	if len(got) != len(secrets) {
		t.Fatalf("%d compatibility signatures, want %d", len(got), len(secrets))
	}
	for i, s := range secrets {
		mac := hmac.New(sha256.New, []byte(s))
		mac.Write([]byte(ts + "." + string(body)))
		if want := hex.EncodeToString(mac.Sum(nil)); got[i] != want {
			t.Errorf("secret %d: signature %s, want %s", i+1, got[i], want)
		}
	}
}

func TestSignRefusesBadInput(t *testing.T) {
	at := time.Unix(kaTS, 0)
	for name, tc := range map[string]struct {
		id      string
		secrets []string
	}{
		"no secrets":       {"evt_1", nil},
		"empty id":         {"", []string{kaSecret}},
		"no prefix":        {"evt_1", []string{"MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}},
		"prefix only":      {"evt_1", []string{"whsec_"}},
		"not base64":       {"evt_1", []string{kaSecret, "whsec_not*base64!"}},
		"first of two bad": {"evt_1", []string{"whsec_!!!!", kaSecret}},
	} {
		t.Run(name, func(t *testing.T) {
			h, err := Sign(tc.id, at, []byte("{}"), tc.secrets)
			if err == nil {
				t.Fatalf("no error, headers %v", h)
			}
			for _, s := range tc.secrets {
				if len(s) > len("whsec_") && strings.Contains(err.Error(), strings.TrimPrefix(s, "whsec_")) {
					t.Errorf("error %q quotes a secret", err)
				}
			}
		})
	}
}
