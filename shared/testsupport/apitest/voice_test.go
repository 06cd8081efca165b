package apitest

import (
	"github.com/voiceops/opsapi/shared/testsupport/spectest"

	"bytes"
	"context"
	"net/http/httptest"
	"testing"

	"github.com/voiceops/opsapi/shared/voiceops"
)

// voice sends an internal voice-intake request.
func (h *harness) voice(path, key, body string) response {
	h.t.Helper()
	req := httptest.NewRequest("POST", path, bytes.NewReader([]byte(body)))
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("X-Internal-Key", key)
	}
	rec := httptest.NewRecorder()
	h.h.ServeHTTP(rec, req)
	res := response{Status: rec.Code, Header: rec.Header(), Body: rec.Body.Bytes()}
	if err := spectest.Validator(h.t).Check(req, res.Status, res.Header, res.Body); err != nil {
		h.t.Errorf("POST %s -> %d %s: response does not match the OpenAPI document: %v", path, res.Status, res.Body, err)
	}
	return res
}

func TestVoiceCall(t *testing.T) {
	h := newHarness(t)
	tenant := `"account_id":"acct_a","project_id":"proj_a1"`
	started := h.voice("/internal/v1/voice/calls", testInternalKey,
		`{`+tenant+`,"from_number":"+441632960001","to_number":"+441632960002","language":"en-GB","environment":"sandbox"}`).Expect(t, 200).JSON(t)
	id := started["conversation_id"].(string)
	turns := "/internal/v1/voice/calls/" + id + "/turns"
	if got := h.voice(turns, testInternalKey, `{`+tenant+`,"dtmf":"1"}`).Expect(t, 200).JSON(t); got["end_conversation"] != false {
		t.Errorf("dtmf turn %v", got)
	}
	h.voice(turns, testInternalKey, `{`+tenant+`,"silence":true}`).Expect(t, 200)
	h.voice(turns, testInternalKey, `{`+tenant+`,"transcript":"zzz"}`).Expect(t, 200)
	h.voice("/internal/v1/voice/calls/"+id+"/end", testInternalKey, `{`+tenant+`,"outcome":"crashed"}`).Expect(t, 200)
	h.voice(turns, testInternalKey, `{`+tenant+`,"transcript":"hello?"}`).Expect(t, 410)

	c, err := h.stores.Conversations.GetConversation(context.Background(), "acct_a", "proj_a1", id)
	if err != nil || c.Channel != voiceops.ChannelVoice || c.FromNumber != "+441632960001" || c.Environment != voiceops.EnvSandbox ||
		c.NumSilences != 1 || c.NumOOD != 1 || c.EndReason != voiceops.EndCrashed || c.InProgress {
		t.Errorf("conversation %+v %v", c, err)
	}

	for name, c := range map[string]struct {
		path, key, body string
		status          int
	}{
		"no key":             {"/internal/v1/voice/calls", "", `{` + tenant + `,"from_number":"1","to_number":"2"}`, 401},
		"wrong key":          {"/internal/v1/voice/calls", "vo_internal_us_nope", `{` + tenant + `,"from_number":"1","to_number":"2"}`, 401},
		"missing numbers":    {"/internal/v1/voice/calls", testInternalKey, `{` + tenant + `}`, 400},
		"bad environment":    {"/internal/v1/voice/calls", testInternalKey, `{` + tenant + `,"from_number":"1","to_number":"2","environment":"prod"}`, 400},
		"silence and speech": {turns, testInternalKey, `{` + tenant + `,"silence":true,"transcript":"x"}`, 400},
		"other project":      {"/internal/v1/voice/calls/" + id + "/turns", testInternalKey, `{"account_id":"acct_a","project_id":"proj_a2","dtmf":"1"}`, 404},
		"bad outcome":        {"/internal/v1/voice/calls/" + id + "/end", testInternalKey, `{` + tenant + `,"outcome":"exploded"}`, 400},
	} {
		t.Run(name, func(t *testing.T) {
			if res := h.voice(c.path, c.key, c.body).Expect(t, c.status); res.JSON(t)["error_message"] == "" {
				t.Errorf("error body %s", res.Body)
			}
		})
	}
}
