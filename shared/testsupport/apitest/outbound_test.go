package apitest

import (
	"github.com/voiceops/opsapi/shared/testsupport/spectest"

	"bytes"
	"errors"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/platform/httpapi"
)

// outbound sends an outbound calling request with the given header (name
// and value; none when value is empty), validated against the OpenAPI document.
func (h *harness) outbound(method, path, header, value, body string) response {
	h.t.Helper()
	var req = httptest.NewRequest(method, path, nil)
	if body != "" {
		req = httptest.NewRequest(method, path, bytes.NewReader([]byte(body)))
		req.Header.Set("Content-Type", "application/json")
	}
	if value != "" {
		req.Header.Set(header, value)
	}
	rec := httptest.NewRecorder()
	h.h.ServeHTTP(rec, req)
	res := response{Status: rec.Code, Header: rec.Header(), Body: rec.Body.Bytes()}
	if res.Header.Get("X-Request-Id") == "" {
		h.t.Errorf("%s %s: no X-Request-Id header", method, path)
	}
	if err := spectest.Validator(h.t).Check(req, res.Status, res.Header, res.Body); err != nil {
		h.t.Errorf("%s %s -> %d %s: response does not match the OpenAPI document: %v", method, path, res.Status, res.Body, err)
	}
	return res
}

func (h *harness) trigger(key, body string) response {
	h.t.Helper()
	return h.outbound("POST", "/v1/outbound-calling/trigger", "X-Service-Auth-Token", key, body)
}

func (h *harness) callStatus(key, sid string) response {
	h.t.Helper()
	return h.outbound("GET", "/v1/outbound-calling/"+sid+"/status", "X-Service-Auth-Token", key, "")
}

func (h *harness) moveCall(key, sid, body string) response {
	h.t.Helper()
	return h.outbound("POST", "/internal/v1/outbound-calling/"+sid+"/status", "X-Internal-Key", key, body)
}

func wantBaseError(t *testing.T, res response) {
	t.Helper()
	if m, _ := res.JSON(t)["error_message"].(string); m == "" {
		t.Errorf("no error_message in %s", res.Body)
	}
}

func TestOutboundTrigger(t *testing.T) {
	h := newHarness(t)
	res := h.trigger(h.service, `{"to_number":"+447911123456","metadata":{"first_name":"Ada","order":"42"},"encryption":"none","country_code":"GB"}`).Expect(t, 200)
	body := res.JSON(t)
	sid, _ := body["callSid"].(string)
	if len(body) != 1 || !regexp.MustCompile(`^CA[0-9a-f]{32}$`).MatchString(sid) {
		t.Fatalf("trigger body %s", res.Body)
	}
	c, err := h.calls.GetCall(t.Context(), sid, h.clock.Now())
	if err != nil || c.AccountID != "acct_a" || c.ProjectID != "proj_a1" || c.ToNumber != "+447911123456" || c.Status != "queued" ||
		c.Metadata["first_name"] != "Ada" || c.Metadata["order"] != "42" || c.Encryption != "none" || c.CountryCode != "GB" || !c.CreatedAt.Equal(h.clock.Now()) {
		t.Errorf("stored call %+v %v", c, err)
	}
	// One dial job, naming the call.
	if jobs := h.dials.sent(); len(jobs) != 1 || jobs[0].SID != sid || jobs[0].AccountID != "acct_a" || !jobs[0].QueuedAt.Equal(h.clock.Now()) {
		t.Errorf("dial jobs %+v", jobs)
	}
	// metadata is optional; null is absent; US number.
	h.trigger(h.service, `{"to_number":"+14155552671"}`).Expect(t, 200)
	h.trigger(h.service2, `{"to_number":"+14155552671","metadata":null}`).Expect(t, 200)
	if other := h.trigger(h.service, `{"to_number":"+14155552671"}`).Expect(t, 200).JSON(t)["callSid"]; other == sid {
		t.Errorf("two calls share the SID %s", sid)
	}

	for name, c := range map[string]struct {
		key, body string
		status    int
	}{
		"no token":          {"", `{"to_number":"+447911123456"}`, 401},
		"malformed token":   {"nope", `{"to_number":"+447911123456"}`, 401},
		"api key":           {h.projKey, `{"to_number":"+447911123456"}`, 401},
		"agent token":       {h.agent, `{"to_number":"+447911123456"}`, 401},
		"missing to_number": {h.service, `{}`, 400},
		"missing plus":      {h.service, `{"to_number":"447911123456"}`, 400},
		"letters":           {h.service, `{"to_number":"+44791112345a"}`, 400},
		"too short":         {h.service, `{"to_number":"+4479"}`, 400},
		"spaces":            {h.service, `{"to_number":"+44 7911 123456"}`, 400},
		"invalid number":    {h.service, `{"to_number":"+999123456789"}`, 400},
		"number not string": {h.service, `{"to_number":447911123456}`, 400},
		"metadata array":    {h.service, `{"to_number":"+447911123456","metadata":[1]}`, 400},
		"metadata number":   {h.service, `{"to_number":"+447911123456","metadata":{"n":1}}`, 400},
		"metadata object":   {h.service, `{"to_number":"+447911123456","metadata":{"o":{"id":"1"}}}`, 400},
		"metadata null val": {h.service, `{"to_number":"+447911123456","metadata":{"n":null}}`, 400},
		"metadata bool":     {h.service, `{"to_number":"+447911123456","metadata":{"b":true}}`, 400},
		"metadata too big":  {h.service, `{"to_number":"+447911123456","metadata":{"k":"` + strings.Repeat("x", 26*1024-7) + `"}}`, 400},
		"country lowercase": {h.service, `{"to_number":"+447911123456","country_code":"gb"}`, 400},
		"country 3 letters": {h.service, `{"to_number":"+447911123456","country_code":"GBR"}`, 400},
		"country number":    {h.service, `{"to_number":"+447911123456","country_code":44}`, 400},
		"encryption number": {h.service, `{"to_number":"+447911123456","encryption":1}`, 400},
		"encryption long":   {h.service, `{"to_number":"+447911123456","encryption":"` + strings.Repeat("e", 257) + `"}`, 400},
		"metadata string":   {h.service, `{"to_number":"+447911123456","metadata":"x"}`, 400},
		"unknown field":     {h.service, `{"to_number":"+447911123456","from":"+14155552671"}`, 400},
		"not json":          {h.service, `{"to_number":`, 400},
		"not an object":     {h.service, `["+447911123456"]`, 400},
	} {
		t.Run(name, func(t *testing.T) {
			before := len(h.dials.sent())
			wantBaseError(t, h.trigger(c.key, c.body).Expect(t, c.status))
			if len(h.dials.sent()) != before {
				t.Errorf("a refused trigger queued a dial job")
			}
		})
	}
	// 26 KB exactly (as compact JSON) is accepted: {"k":"..."} is 8 bytes more than the value.
	h.trigger(h.service, `{"to_number":"+447911123456","metadata": {"k" : "`+strings.Repeat("x", 26*1024-8)+`"}}`).Expect(t, 200)
}

// A trigger whose job cannot be queued is 500 (its call, written at the
// same time, is given up: shared/calls TestTriggerOverlapsSendAndWrite).
func TestOutboundTriggerQueueDown(t *testing.T) {
	h := newHarness(t)
	h.dials.err = errors.New("sqs down")
	res := h.trigger(h.service, `{"to_number":"+447911123456"}`).Expect(t, 500)
	if m := res.JSON(t)["error_message"]; m != "internal error" {
		t.Errorf("body %s", res.Body)
	}
}

func TestOutboundStatusAndTransitions(t *testing.T) {
	for _, end := range []string{"success", "failure"} {
		t.Run(end, func(t *testing.T) {
			h := newHarness(t)
			created := h.clock.Now()
			sid := h.trigger(h.service, `{"to_number":"+447911123456"}`).Expect(t, 200).JSON(t)["callSid"].(string)
			status := func(want string, updated time.Time) {
				t.Helper()
				got := h.callStatus(h.service, sid).Expect(t, 200).JSON(t)
				if got["callSid"] != sid || got["status"] != want || got["created_at"] != httpapi.Time(created) || got["last_updated"] != httpapi.Time(updated) {
					t.Errorf("status %v, want %s updated %s", got, want, httpapi.Time(updated))
				}
			}
			status("queued", created)

			// queued: only calling.
			for _, to := range []string{"success", "failure"} {
				wantBaseError(t, h.moveCall(testInternalKey, sid, `{"status":"`+to+`"}`).Expect(t, 409))
			}
			h.clock.Advance(3 * time.Second)
			calling := h.clock.Now()
			if got := h.moveCall(testInternalKey, sid, `{"status":"calling"}`).Expect(t, 200).JSON(t); got["status"] != "calling" || got["last_updated"] != httpapi.Time(calling) {
				t.Errorf("move to calling: %v", got)
			}
			status("calling", calling)
			// calling: not calling again.
			wantBaseError(t, h.moveCall(testInternalKey, sid, `{"status":"calling"}`).Expect(t, 409))

			h.clock.Advance(time.Minute)
			ended := h.clock.Now()
			h.moveCall(testInternalKey, sid, `{"status":"`+end+`"}`).Expect(t, 200)
			status(end, ended)
			// A failure without a reason is "failed"; success has none.
			wantReason := map[string]any{"success": nil, "failure": "failed"}[end]
			if got := h.callStatus(h.service, sid).Expect(t, 200).JSON(t)["reason"]; got != wantReason {
				t.Errorf("reason %v, want %v", got, wantReason)
			}
			// Terminal statuses never change.
			for _, to := range []string{"calling", "success", "failure"} {
				wantBaseError(t, h.moveCall(testInternalKey, sid, `{"status":"`+to+`"}`).Expect(t, 409))
			}
			status(end, ended)

			// Another project's service key: 404, as for an unknown SID.
			wantBaseError(t, h.callStatus(h.service2, sid).Expect(t, 404))
			wantBaseError(t, h.callStatus(h.service, "CA0123456789abcdef0123456789abcdef").Expect(t, 404))

			// Kept 2 hours after the terminal status, then 404.
			h.clock.Advance(2 * time.Hour)
			status(end, ended)
			h.clock.Advance(time.Second)
			wantBaseError(t, h.callStatus(h.service, sid).Expect(t, 404))
			wantBaseError(t, h.moveCall(testInternalKey, sid, `{"status":"success"}`).Expect(t, 404))
		})
	}
}

func TestOutboundStatusErrors(t *testing.T) {
	h := newHarness(t)
	sid := h.trigger(h.service, `{"to_number":"+14155552671"}`).Expect(t, 200).JSON(t)["callSid"].(string)
	// A call that never ends does not expire.
	h.clock.Advance(24 * time.Hour)
	h.callStatus(h.service, sid).Expect(t, 200)

	for name, c := range map[string]struct {
		key, sid string
		status   int
	}{
		"no token":        {"", sid, 401},
		"invalid token":   {"vo_service_us_nope", sid, 401},
		"api key":         {h.keyA, sid, 401},
		"uppercase hex":   {h.service, "CA" + strings.ToUpper(sid[2:]), 400},
		"wrong prefix":    {h.service, "CB" + sid[2:], 400},
		"too short":       {h.service, sid[:33], 400},
		"too long":        {h.service, sid + "0", 400},
		"not hex":         {h.service, "CA0123456789abcdef0123456789abcdeg", 400},
		"unknown":         {h.service, "CAffffffffffffffffffffffffffffffff", 404},
		"other project":   {h.service2, sid, 404},
		"conversation id": {h.service, "conv_123", 400},
	} {
		t.Run(name, func(t *testing.T) {
			wantBaseError(t, h.callStatus(c.key, c.sid).Expect(t, c.status))
		})
	}

	for name, c := range map[string]struct {
		key, sid, body string
		status         int
	}{
		"no internal key": {"", sid, `{"status":"calling"}`, 401},
		"service key":     {h.service, sid, `{"status":"calling"}`, 401},
		"wrong internal":  {"vo_internal_us_nope", sid, `{"status":"calling"}`, 401},
		"malformed sid":   {testInternalKey, "CA123", `{"status":"calling"}`, 400},
		"unknown sid":     {testInternalKey, "CAffffffffffffffffffffffffffffffff", `{"status":"calling"}`, 404},
		"missing status":  {testInternalKey, sid, `{}`, 400},
		"queued":          {testInternalKey, sid, `{"status":"queued"}`, 400},
		"unknown status":  {testInternalKey, sid, `{"status":"ringing"}`, 400},
		"unknown field":   {testInternalKey, sid, `{"status":"calling","x":1}`, 400},
		"reason calling":  {testInternalKey, sid, `{"status":"calling","reason":"busy"}`, 400},
		"unknown reason":  {testInternalKey, sid, `{"status":"failure","reason":"lost"}`, 400},
		"not json":        {testInternalKey, sid, `nope`, 400},
	} {
		t.Run("move "+name, func(t *testing.T) {
			wantBaseError(t, h.moveCall(c.key, c.sid, c.body).Expect(t, c.status))
		})
	}
	if got := h.callStatus(h.service, sid).Expect(t, 200).JSON(t)["status"]; got != "queued" {
		t.Errorf("after refused moves: %v", got)
	}
}
