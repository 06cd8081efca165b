package apitest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/voiceops"
)

const dniPath = "/v1/conversations/dni-reservation"

func TestDNIReservation(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	dni := h.store.DNI()
	numbers := []string{"+441632960100", "+441632960101"}
	if err := dni.AddNumbers(ctx, "acct_a", "proj_a1", numbers, 0); err != nil {
		t.Fatal(err)
	}

	// Two reservations take the two numbers, until the hold expires.
	got := map[string]bool{}
	for i := range 2 {
		res := h.do("POST", dniPath, h.projKey, map[string]any{"attributes": map[string]any{"order_id": fmt.Sprint("o-", i)}}).Expect(t, 200).JSON(t)
		n, _ := res["dni"].(string)
		got[n] = true
		if want := h.clock.Now().Add(10 * time.Minute).Format(voiceops.TimeFormat); res["expires_at"] != want {
			t.Errorf("expires_at %v, want %s", res["expires_at"], want)
		}
	}
	if !got[numbers[0]] || !got[numbers[1]] {
		t.Errorf("reserved %v", got)
	}
	if res := h.do("POST", dniPath, h.projKey, `{"attributes":{}}`).Expect(t, 404).JSON(t); res["error_message"] != "no available number" {
		t.Errorf("full pool: %v", res)
	}
	// Another project's pool is its own (empty).
	h.do("POST", dniPath, h.projKey2, `{"attributes":{}}`).Expect(t, 404)

	// A call on a reserved number gets its attributes and frees it.
	started := h.voice("/internal/v1/voice/calls", testInternalKey,
		`{"account_id":"acct_a","project_id":"proj_a1","from_number":"+441632960001","to_number":"`+numbers[0]+`"}`).Expect(t, 200).JSON(t)
	c, err := h.stores.Conversations.GetConversation(ctx, "acct_a", "proj_a1", started["conversation_id"].(string))
	if err != nil || c.IntegrationAttributes["order_id"] == nil {
		t.Fatalf("conversation attributes %v %v", c.IntegrationAttributes, err)
	}
	res := h.do("POST", dniPath, h.projKey, `{"attributes":{"order_id":"again"}}`).Expect(t, 200).JSON(t)
	if res["dni"] != numbers[0] {
		t.Errorf("after the call, reserved %v, want %s", res["dni"], numbers[0])
	}
	// They are the attributes of one of the first two reservations.
	if !strings.HasPrefix(fmt.Sprint(c.IntegrationAttributes["order_id"]), "o-") {
		t.Errorf("attributes %v", c.IntegrationAttributes)
	}

	// Expired reservations free their numbers.
	h.clock.Advance(10 * time.Minute)
	for range 2 {
		h.do("POST", dniPath, h.projKey, `{"attributes":{"x":1}}`).Expect(t, 200)
	}

	for name, c := range map[string]struct {
		key, body string
		status    int
		msg       string
	}{
		"no key":                {"", `{"attributes":{}}`, 401, ""},
		"bad key":               {"vo_api_us_nope", `{"attributes":{}}`, 401, ""},
		"agent token":           {h.agent, `{"attributes":{}}`, 401, ""},
		"account-scoped key":    {h.keyA, `{"attributes":{}}`, 403, "a project-scoped key is required"},
		"no attributes":         {h.projKey, `{}`, 400, "validation failed: attributes is required"},
		"null attributes":       {h.projKey, `{"attributes":null}`, 400, ""},
		"attributes not object": {h.projKey, `{"attributes":[1]}`, 400, "validation failed: attributes must be an object"},
		"unknown field":         {h.projKey, `{"attributes":{},"number":"+1"}`, 400, ""},
		"not json":              {h.projKey, `{"attributes":`, 400, ""},
		"empty body":            {h.projKey, ``, 400, ""},
		"too large attributes":  {h.projKey, `{"attributes":{"x":"` + strings.Repeat("a", 70000) + `"}}`, 400, "validation failed: attributes is 70008 bytes; at most 65536 bytes are accepted"},
	} {
		t.Run(name, func(t *testing.T) {
			res := h.do("POST", dniPath, c.key, c.body).Expect(t, c.status).JSON(t)
			if msg, _ := res["error_message"].(string); msg == "" || (c.msg != "" && msg != c.msg) {
				t.Errorf("error_message %q, want %q", msg, c.msg)
			}
		})
	}
	// The answer says which methods the path has.
	req := httptest.NewRequest("GET", dniPath, nil)
	rec := httptest.NewRecorder()
	h.h.ServeHTTP(rec, req)
	if rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("GET: %d", rec.Code)
	}
}

// TestDNIReservationConcurrent: 2N concurrent requests on a pool of N
// numbers: N get distinct numbers, N get 404.
func TestDNIReservationConcurrent(t *testing.T) {
	h := newHarness(t)
	const n = 10
	var numbers []string
	for i := range n {
		numbers = append(numbers, fmt.Sprintf("+4416329602%02d", i))
	}
	if err := h.store.DNI().AddNumbers(context.Background(), "acct_a", "proj_a1", numbers, 0); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	seen, missing := map[string]bool{}, 0
	for i := range 2 * n {
		wg.Go(func() {
			req := httptest.NewRequest("POST", dniPath, strings.NewReader(fmt.Sprintf(`{"attributes":{"i":%d}}`, i)))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("x-api-key", h.projKey)
			rec := httptest.NewRecorder()
			h.h.ServeHTTP(rec, req)
			mu.Lock()
			defer mu.Unlock()
			switch rec.Code {
			case 200:
				var body struct{ DNI string }
				_ = json.Unmarshal(rec.Body.Bytes(), &body)
				if seen[body.DNI] {
					t.Errorf("%s reserved twice", body.DNI)
				}
				seen[body.DNI] = true
			case 404:
				missing++
			default:
				t.Errorf("status %d: %s", rec.Code, rec.Body)
			}
		})
	}
	wg.Wait()
	if len(seen) != n || missing != n {
		t.Errorf("%d reserved, %d without a number; want %d and %d", len(seen), missing, n, n)
	}
}
