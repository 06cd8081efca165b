package main

import (
	"context"
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base64"
	"encoding/json"
	"html"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdacontext"

	rt "github.com/voiceops/opsapi/shared/testsupport/roundtrips"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// TestRoundTrips holds each route's AWS calls on a warm function to
// roundtrips.Want (docs/performance.md, "AWS round trips per request").
func TestRoundTrips(t *testing.T) {
	env := rt.NewEnv(t)
	// The steps of Twilio's callbacks run in an Event invoke of the
	// function itself: the proxy plays Lambda and runs them here.
	lambdacontext.FunctionName = "calls"
	raw, err := build(env.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	env.Recorder.OnInvoke = func(function string, payload []byte) {
		if _, err := raw(context.Background(), payload); err != nil {
			t.Errorf("step invocation of %s: %v", function, err)
		}
	}
	h := func(ctx context.Context, ev events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		payload, err := json.Marshal(ev)
		if err != nil {
			return events.APIGatewayV2HTTPResponse{}, err
		}
		out, err := raw(ctx, payload)
		if err != nil {
			return events.APIGatewayV2HTTPResponse{}, err
		}
		return out.(events.APIGatewayV2HTTPResponse), nil
	}
	ctx := context.Background()
	if err := env.Config.DNI().AddNumbers(ctx, "acct_a", "proj_a1", []string{"+441632960100", "+441632960101"}, 0); err != nil {
		t.Fatal(err)
	}
	f := rt.Drive(t, "calls", env, h)
	internal := rt.Header("X-Internal-Key", rt.InternalKey)
	tenant := `"account_id":"acct_a","project_id":"proj_a1"`
	start := `{` + tenant + `,"from_number":"+441632960001","to_number":"+441632960002"}`
	// Warm: the internal key's one read from Secrets Manager, the keys'
	// first reads, the project's agent configuration and the Twilio secret.
	f.Do(rt.Req{Method: "POST", Path: "/internal/v1/voice/calls", Header: internal, Body: start, Status: rt.OK})
	f.Do(rt.Req{Method: "POST", Path: "/v1/conversations/dni-reservation", Header: rt.Header("x-api-key", env.Keys.Proj), Body: `{"attributes":{"order_id":"o-0"}}`, Status: rt.OK})
	warm := call(t, env)
	twilioReq(f, warm, "/status", url.Values{"CallStatus": {"ringing"}}, 204)

	id := f.Measure("POST /internal/v1/voice/calls", rt.Req{Method: "POST", Path: "/internal/v1/voice/calls", Header: internal, Body: start, Status: rt.OK}).JSON(t)["conversation_id"].(string)
	f.Measure("POST /internal/v1/voice/calls/{conversation_id}/turns", rt.Req{Method: "POST", Path: "/internal/v1/voice/calls/" + id + "/turns", Header: internal,
		Body: `{` + tenant + `,"transcript":"balance"}`, Status: rt.OK})
	f.Measure("POST /internal/v1/voice/calls/{conversation_id}/end", rt.Req{Method: "POST", Path: "/internal/v1/voice/calls/" + id + "/end", Header: internal,
		Body: `{` + tenant + `,"outcome":"completed"}`, Status: rt.OK})
	f.Measure("POST /v1/conversations/dni-reservation", rt.Req{Method: "POST", Path: "/v1/conversations/dni-reservation", Header: rt.Header("x-api-key", env.Keys.Proj),
		Body: `{"attributes":{"order_id":"o-1"}}`, Status: rt.OK})

	sid := call(t, env)
	f.Measure("POST /v1/telephony/twilio/{callSid}/status", twilioSigned(sid, "/status", url.Values{"CallStatus": {"ringing"}}, 204))
	answer := f.Measure("POST /v1/telephony/twilio/{callSid}/answer", twilioSigned(sid, "/answer", url.Values{"CallStatus": {"in-progress"}, "From": {rt.Twilio.From}}, 200))
	action := regexp.MustCompile(`action="([^"]+)"`).FindStringSubmatch(answer.Body)
	if action == nil {
		t.Fatalf("answer %s: no turn URL", answer.Body)
	}
	turn := strings.TrimPrefix(html.UnescapeString(action[1]), publicURL)
	r := twilioSigned(sid, "", url.Values{"SpeechResult": {"balance"}}, 200)
	r.Path = turn
	r.Header["X-Twilio-Signature"] = signature(publicURL+turn, url.Values{"SpeechResult": {"balance"}})
	f.Measure("POST /v1/telephony/twilio/{callSid}/turns/{conversation_id}", r)
	f.Check()
}

const publicURL = "https://base.example.com"

// call stores a queued outbound call of acct_a/proj_a1, as the trigger does.
func call(t *testing.T, env *rt.Env) string {
	t.Helper()
	sid := voiceops.NewCallSID()
	if err := env.Calls.CreateCall(context.Background(), voiceops.Call{SID: sid, AccountID: "acct_a", ProjectID: "proj_a1", ToNumber: "+14155552671",
		Status: voiceops.CallQueued, CreatedAt: time.Now().UTC()}); err != nil {
		t.Fatal(err)
	}
	return sid
}

func twilioReq(f *rt.Func, sid, suffix string, form url.Values, status int) rt.Resp {
	return f.Do(twilioSigned(sid, suffix, form, status))
}

// twilioSigned is Twilio's callback for the call, signed as Twilio signs.
func twilioSigned(sid, suffix string, form url.Values, status int) rt.Req {
	path := "/v1/telephony/twilio/" + sid + suffix
	return rt.Req{Method: "POST", Path: path, Body: form.Encode(), Status: status, Header: map[string]string{
		"Content-Type": "application/x-www-form-urlencoded", "X-Twilio-Signature": signature(publicURL+path, form)}}
}

// signature is Twilio's: HMAC-SHA1 with the auth token over the URL and
// the sorted parameters, base64.
func signature(fullURL string, form url.Values) string {
	keys := make([]string, 0, len(form))
	for k := range form {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	s := fullURL
	for _, k := range keys {
		s += k + form.Get(k)
	}
	m := hmac.New(sha1.New, []byte(rt.Twilio.Token))
	m.Write([]byte(s))
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}
