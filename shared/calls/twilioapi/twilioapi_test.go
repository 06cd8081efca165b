package twilioapi

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/calls"
	"github.com/voiceops/opsapi/shared/calls/callstest/twiliocreds"
	"github.com/voiceops/opsapi/shared/calls/callstest/twiliofake"
	"github.com/voiceops/opsapi/shared/conversations/agent"
	"github.com/voiceops/opsapi/shared/conversations/convgraph"
	"github.com/voiceops/opsapi/shared/platform/httpapi"
	"github.com/voiceops/opsapi/shared/store/memory"
	"github.com/voiceops/opsapi/shared/voiceops"
)

const (
	base  = "https://base.example.com"
	token = twiliofake.AuthToken
)

type fixture struct {
	h      http.Handler
	calls  *memory.Calls
	stores voiceops.Stores
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	return newFixtureWith(t, nil)
}

// newFixtureWith is newFixture with its service and callbacks adjusted
// by set before they serve.
func newFixtureWith(t *testing.T, set func(*calls.Service, *Callbacks)) *fixture {
	t.Helper()
	ctx := context.Background()
	mem := memory.New()
	f := &fixture{calls: memory.NewCalls(), stores: mem.Stores()}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(f.stores.Accounts.CreateAccount(ctx, voiceops.Account{ID: "acct_a", CreatedAt: time.Now()}))
	must(f.stores.Accounts.CreateProject(ctx, voiceops.Project{ID: "proj_a", AccountID: "acct_a", CreatedAt: time.Now()}))
	must(agent.PutConfig(ctx, mem.AgentConfigs(), agent.DemoConfig("acct_a", "proj_a")))
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	engine := convgraph.New(convgraph.Deps{Conversations: f.stores.Conversations, Configs: mem.AgentConfigs(), Now: time.Now, Log: log})
	g := &Callbacks{Calls: calls.New(f.calls, time.Now, calls.WithEngine(engine)),
		Creds:         twiliocreds.Static{"acct_a": {AccountSID: twiliofake.AccountSID, AuthToken: token, FromNumber: "+15005550006"}},
		PublicBaseURL: base}
	if set != nil {
		set(g.Calls, g)
	}
	f.h = httpapi.New(httpapi.Config{Now: time.Now, Log: log}, g.Routes())
	return f
}

// placed stores a call as the dialer leaves it: calling.
func (f *fixture) placed(t *testing.T) voiceops.Call {
	t.Helper()
	now := time.Now().UTC()
	c := voiceops.Call{SID: voiceops.NewCallSID(), AccountID: "acct_a", ProjectID: "proj_a", ToNumber: "+14155550100",
		Metadata: map[string]any{"first_name": "Ada"}, Status: voiceops.CallQueued, CreatedAt: now, UpdatedAt: now}
	if err := f.calls.CreateCall(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	c, err := f.calls.MoveCall(context.Background(), c.SID, voiceops.CallCalling, "", now)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// post sends a callback signed for its URL (sig "": signed correctly).
func (f *fixture) post(path string, form url.Values, sig string) *httptest.ResponseRecorder {
	if sig == "" {
		sig = twiliofake.Sign(token, base+path, form)
	}
	req := httptest.NewRequest("POST", path, strings.NewReader(form.Encode()))
	twiliofake.SetCallback(req, sig)
	rec := httptest.NewRecorder()
	f.h.ServeHTTP(rec, req)
	return rec
}

func (f *fixture) call(t *testing.T, sid string) voiceops.Call {
	t.Helper()
	c, err := f.calls.GetCall(context.Background(), sid, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestInvalidSignaturesChangeNothing(t *testing.T) {
	f := newFixture(t)
	c := f.placed(t)
	path := "/v1/telephony/twilio/" + c.SID + "/status"
	form := url.Values{"CallSid": {"CAfeed"}, "CallStatus": {"busy"}}
	for name, sig := range map[string]string{
		"missing":        "x",
		"wrong":          "AAAAAAAAAAAAAAAAAAAAAAAAAAA=",
		"for other URL":  twiliofake.Sign(token, base+"/v1/telephony/twilio/"+voiceops.NewCallSID()+"/status", form),
		"for other body": twiliofake.Sign(token, base+path, url.Values{"CallSid": {"CAfeed"}, "CallStatus": {"completed"}}),
	} {
		t.Run(name, func(t *testing.T) {
			if rec := f.post(path, form, sig); rec.Code != http.StatusForbidden {
				t.Errorf("%d %s", rec.Code, rec.Body)
			}
			if got := f.call(t, c.SID); got.Status != voiceops.CallCalling {
				t.Errorf("the call moved to %s", got.Status)
			}
		})
	}
	// Unknown call: 404.
	if rec := f.post("/v1/telephony/twilio/"+voiceops.NewCallSID()+"/status", form, ""); rec.Code != http.StatusNotFound {
		t.Errorf("unknown call: %d", rec.Code)
	}
}

func TestStatusReports(t *testing.T) {
	f := newFixture(t)
	c := f.placed(t)
	path := "/v1/telephony/twilio/" + c.SID + "/status"
	for _, st := range []string{"initiated", "ringing", "no-answer", "ringing", "completed"} {
		if rec := f.post(path, url.Values{"CallStatus": {st}, "CallSid": {"CAfeed"}}, ""); rec.Code != http.StatusNoContent {
			t.Fatalf("%s: %d %s", st, rec.Code, rec.Body)
		}
	}
	if got := f.call(t, c.SID); got.Status != voiceops.CallFailure || got.Reason != voiceops.ReasonNoAnswer {
		t.Errorf("after no-answer then late reports: %s %q", got.Status, got.Reason)
	}
}

// TestAnsweredCall: the answer URL starts the voice conversation, each
// Gather is a turn, the completed report ends the call and the
// conversation.
func TestAnsweredCall(t *testing.T) {
	f := newFixture(t)
	c := f.placed(t)
	rec := f.post("/v1/telephony/twilio/"+c.SID+"/answer", url.Values{"CallSid": {"CAfeed"}, "From": {"+15005550006"}, "To": {"+14155550100"}}, "")
	if rec.Code != 200 || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/xml") || !strings.Contains(rec.Body.String(), "<Gather") {
		t.Fatalf("answer: %d %s", rec.Code, rec.Body)
	}
	got := f.call(t, c.SID)
	if got.ConversationID == "" || !strings.Contains(rec.Body.String(), `action="`+base+"/v1/telephony/twilio/"+c.SID+"/turns/"+got.ConversationID+"?turn=1"+`"`) {
		t.Fatalf("conversation %q; TwiML %s", got.ConversationID, rec.Body)
	}
	conv, err := f.stores.Conversations.GetConversation(context.Background(), "acct_a", "proj_a", got.ConversationID)
	if err != nil || conv.Channel != voiceops.ChannelVoice || conv.FromNumber != "+15005550006" || conv.ToNumber != "+14155550100" ||
		conv.IntegrationAttributes["first_name"] != "Ada" || !conv.InProgress {
		t.Fatalf("conversation %+v %v", conv, err)
	}
	turn := "/v1/telephony/twilio/" + c.SID + "/turns/" + got.ConversationID + "?turn=1"
	rec = f.post(turn, url.Values{"SpeechResult": {"balance"}}, "")
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), "<Gather") {
		t.Errorf("turn: %d %s", rec.Code, rec.Body)
	}
	// Another conversation's ID in the path: 404.
	if rec := f.post("/v1/telephony/twilio/"+c.SID+"/turns/conv_other?turn=1", url.Values{"SpeechResult": {"hi"}}, ""); rec.Code != 404 {
		t.Errorf("other conversation: %d", rec.Code)
	}
	if rec := f.post("/v1/telephony/twilio/"+c.SID+"/status", url.Values{"CallStatus": {"completed"}}, ""); rec.Code != 204 {
		t.Fatalf("completed: %d", rec.Code)
	}
	conv, _ = f.stores.Conversations.GetConversation(context.Background(), "acct_a", "proj_a", got.ConversationID)
	if f.call(t, c.SID).Status != voiceops.CallSuccess || conv.InProgress || conv.NumTurns != 2 {
		t.Errorf("after completed: call %s, conversation in progress %v, %d turns", f.call(t, c.SID).Status, conv.InProgress, conv.NumTurns)
	}
	// After the end, a late Gather (the next turn) hangs up; turn 1
	// replayed still gets its stored answer.
	next := strings.Replace(turn, "turn=1", "turn=2", 1)
	if rec := f.post(next, url.Values{"SpeechResult": {"hello?"}}, ""); rec.Code != 200 || !strings.Contains(rec.Body.String(), "<Hangup/>") {
		t.Errorf("late turn: %d %s", rec.Code, rec.Body)
	}
}

// A second answer request for the same call (Twilio asking twice) gets
// the first one's TwiML: the first conversation stays the call's, and no
// other starts. (The whole suite of replays: callbackstest.)
func TestAnswerTwice(t *testing.T) {
	f := newFixture(t)
	c := f.placed(t)
	form := url.Values{"CallSid": {"CAfeed"}, "From": {"+15005550006"}}
	rec := f.post("/v1/telephony/twilio/"+c.SID+"/answer", form, "")
	if rec.Code != 200 {
		t.Fatalf("first answer: %d", rec.Code)
	}
	first := f.call(t, c.SID).ConversationID
	if again := f.post("/v1/telephony/twilio/"+c.SID+"/answer", form, ""); again.Code != 200 || again.Body.String() != rec.Body.String() {
		t.Errorf("second answer: %d %s, want %s", again.Code, again.Body, rec.Body)
	}
	if got := f.call(t, c.SID).ConversationID; got != first {
		t.Errorf("the call's conversation changed from %s to %s", first, got)
	}
	convs, err := f.stores.Conversations.ListConversations(context.Background(), "acct_a", "proj_a", time.Now().Add(-time.Hour), time.Now().Add(time.Hour), "", 10)
	if err != nil || len(convs) != 1 {
		t.Fatalf("%d conversations %v", len(convs), err)
	}
}

// TestTurnBoundaryShiftIsRefused forges a turn from one observed signed
// callback: the URL's trailing digit moved into the first parameter's
// name leaves the signed string, and so the signature, unchanged. It is
// refused with 400 and the conversation gains no turn.
func TestTurnBoundaryShiftIsRefused(t *testing.T) {
	f := newFixture(t)
	c := f.placed(t)
	if rec := f.post("/v1/telephony/twilio/"+c.SID+"/answer", url.Values{"CallSid": {"CAfeed"}, "From": {"+15005550006"}}, ""); rec.Code != 200 {
		t.Fatalf("answer: %d %s", rec.Code, rec.Body)
	}
	convID := f.call(t, c.SID).ConversationID
	turnPath := "/v1/telephony/twilio/" + c.SID + "/turns/" + convID
	numTurns := func() int {
		t.Helper()
		conv, err := f.stores.Conversations.GetConversation(context.Background(), "acct_a", "proj_a", convID)
		if err != nil {
			t.Fatal(err)
		}
		return conv.NumTurns
	}
	form := url.Values{"AccountSid": {twiliofake.AccountSID}, "SpeechResult": {"balance"}}
	sig := twiliofake.Sign(token, base+turnPath+"?turn=1", form)
	if rec := f.post(turnPath+"?turn=1", form, sig); rec.Code != 200 {
		t.Fatalf("turn 1: %d %s", rec.Code, rec.Body)
	}
	before := numTurns()
	speech := url.Values{"AccountSid": {twiliofake.AccountSID}, "SpeechResult": {"balance"}}
	for name, forged := range map[string]struct {
		signedQuery, query string
		form               url.Values
	}{
		"digit into the first name":      {"turn=1", "turn=", url.Values{"1AccountSid": {twiliofake.AccountSID}, "SpeechResult": {"balance"}}},
		"last digit into the first name": {"turn=21", "turn=2", url.Values{"1AccountSid": {twiliofake.AccountSID}, "SpeechResult": {"balance"}}},
		"letter into the URL":            {"turn=2", "turn=2S", url.Values{"peechResult": {"balance"}}},
	} {
		t.Run(name, func(t *testing.T) {
			signed := speech
			if forged.query == "turn=2S" {
				signed = url.Values{"SpeechResult": {"balance"}}
			}
			sig := twiliofake.Sign(token, base+turnPath+"?"+forged.signedQuery, signed)
			if twiliofake.Sign(token, base+turnPath+"?"+forged.query, forged.form) != sig {
				t.Fatal("the forgery does not keep the signature: the test proves nothing")
			}
			for range 2 {
				rec := f.post(turnPath+"?"+forged.query, forged.form, sig)
				if rec.Code != http.StatusBadRequest {
					t.Errorf("forged turn: %d %s, want 400", rec.Code, rec.Body)
				}
			}
			if n := numTurns(); n != before {
				t.Errorf("the conversation went from %d to %d turns", before, n)
			}
		})
	}
}

func TestParseForm(t *testing.T) {
	for body, ok := range map[string]bool{
		"":                                     true,
		"AccountSid=AC1&SpeechResult=hi+there": true,
		"msg=Gather+End&Digits=1":              true,
		"SipHeader_X-Custom.a=1":               true,
		"2AccountSid=AC1":                      false,
		"_x=1":                                 false,
		"Speech%20Result=1":                    false,
		"Digits=1&Digits=2":                    false,
		"=1":                                   false,
		"a=%zz":                                false,
	} {
		form, err := ParseForm(body)
		if (err == nil) != ok {
			t.Errorf("%q: %v %v, want ok %v", body, form, err, ok)
		}
	}
}

func TestTurnNumber(t *testing.T) {
	for q, want := range map[string]int{
		"turn=1": 1, "turn=42": 42, "turn=999999999": 999999999, "turn=3&result=1": 3,
		"": 0, "turn=": 0, "turn=0": 0, "turn=01": 0, "turn=-1": 0, "turn=+1": 0, "turn=1A": 0,
		"turn=1&turn=2": 0, "turn=1&x=1": 0, "x=1&turn=1": 0, "turn=1000000000": 0, "Turn=1": 0,
		"turn=1&result=": 0, "turn=1&result=1A": 0, "turn=&result=1": 0, "result=1&turn=1": 0, "turn=1&result=1&result=1": 0,
	} {
		n, result, err := TurnNumber(q)
		if n != want || (err == nil) != (want > 0) || result != (err == nil && strings.HasSuffix(q, "&result=1")) {
			t.Errorf("%q: %d %v %v, want %d", q, n, result, err, want)
		}
	}
}
