// Package callbackstest is the suite of the calls service's callback
// semantics, run on every store implementation (memory in shared/calls,
// DynamoDB on moto in shared/store/dynamo): Twilio's signed callbacks through
// the real HTTP group (shared/calls/twilioapi), the dev server's simulator, and
// the real conversation engine, over the stores a test hands it.
package callbackstest

import (
	"github.com/voiceops/opsapi/shared/testsupport/spectest"

	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/calls"
	"github.com/voiceops/opsapi/shared/calls/callstest/twiliocreds"
	"github.com/voiceops/opsapi/shared/calls/callstest/twiliofake"
	"github.com/voiceops/opsapi/shared/calls/simulator"
	"github.com/voiceops/opsapi/shared/calls/telephony"
	"github.com/voiceops/opsapi/shared/calls/telephony/twilio"
	"github.com/voiceops/opsapi/shared/calls/twilioapi"
	"github.com/voiceops/opsapi/shared/conversations/agent"
	"github.com/voiceops/opsapi/shared/conversations/convgraph"
	"github.com/voiceops/opsapi/shared/platform/httpapi"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// Env is what the suite runs on: empty stores of one implementation.
type Env struct {
	Stores  voiceops.Stores // Accounts and Conversations are used
	Configs voiceops.AgentConfigStore
	Calls   voiceops.CallStore
}

// Run runs the suite; newEnv returns empty stores.
func Run(t *testing.T, newEnv func(t *testing.T) Env) {
	t.Helper()
	t.Run("SimulatorNamesItsConversation", func(t *testing.T) { testSimulator(t, newFixture(t, newEnv(t))) })
	t.Run("AnswerReplayed", func(t *testing.T) { testAnswerReplayed(t, newFixture(t, newEnv(t))) })
	t.Run("AnswersAtOnce", func(t *testing.T) { testAnswersAtOnce(t, newFixture(t, newEnv(t))) })
	t.Run("AnswerAfterTheEnd", func(t *testing.T) { testAnswerAfterEnd(t, newFixture(t, newEnv(t))) })
	t.Run("TurnReplayed", func(t *testing.T) { testTurnReplayed(t, newFixture(t, newEnv(t))) })
	t.Run("StatusNeverBackwards", func(t *testing.T) { testStatusOrder(t, newFixture(t, newEnv(t))) })
	t.Run("SlowTurnCommittedOnce", func(t *testing.T) { testSlowTurn(t, newFixture(t, newEnv(t))) })
}

const (
	base      = "https://base.example.com"
	authToken = twiliofake.AuthToken
	account   = "acct_calls"
	project   = "proj_calls"
	callerID  = twiliofake.FromNumber
)

type fixture struct {
	t   *testing.T
	env Env
	svc *calls.Service
	h   http.Handler
	t0  time.Time
}

func newFixture(t *testing.T, env Env) *fixture {
	t.Helper()
	ctx := context.Background()
	f := &fixture{t: t, env: env, t0: time.Now().UTC()}
	must(t, env.Stores.Accounts.CreateAccount(ctx, voiceops.Account{ID: account, CreatedAt: f.t0}))
	must(t, env.Stores.Accounts.CreateProject(ctx, voiceops.Project{ID: project, AccountID: account, CreatedAt: f.t0}))
	must(t, agent.PutConfig(ctx, env.Configs, agent.DemoConfig(account, project)))
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	engine := convgraph.New(convgraph.Deps{Conversations: env.Stores.Conversations, Configs: env.Configs, Now: time.Now, Log: log})
	f.svc = calls.New(env.Calls, time.Now, calls.WithEngine(engine))
	g := &twilioapi.Callbacks{Calls: f.svc, PublicBaseURL: base,
		Creds: twiliocreds.Static{account: {AccountSID: twiliofake.AccountSID, AuthToken: authToken, FromNumber: callerID}}}
	f.h = httpapi.New(httpapi.Config{Now: time.Now, Log: log}, g.Routes())
	return f
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// placed stores a call as the dialer leaves it: calling.
func (f *fixture) placed(t *testing.T, to string) voiceops.Call {
	t.Helper()
	now := time.Now().UTC()
	c := voiceops.Call{SID: voiceops.NewCallSID(), AccountID: account, ProjectID: project, ToNumber: to,
		Metadata: map[string]any{"first_name": "Ada"}, Status: voiceops.CallQueued, CreatedAt: now, UpdatedAt: now}
	must(t, f.env.Calls.CreateCall(context.Background(), c))
	claimed, err := f.svc.Claim(context.Background(), c.SID)
	if err != nil || !claimed {
		t.Fatalf("claim: %v %v", claimed, err)
	}
	return f.call(t, c.SID)
}

func (f *fixture) call(t *testing.T, sid string) voiceops.Call {
	t.Helper()
	c, err := f.env.Calls.GetCall(context.Background(), sid, time.Now())
	must(t, err)
	return c
}

// conversations lists the project's conversations.
func (f *fixture) conversations(t *testing.T) []voiceops.Conversation {
	t.Helper()
	convs, err := f.env.Stores.Conversations.ListConversations(context.Background(), account, project, f.t0.Add(-time.Hour), time.Now().Add(time.Hour), "", 100)
	must(t, err)
	return convs
}

// post sends a correctly signed callback to pathQuery (a path, with its
// query); token, when set, is Twilio's idempotency token.
func (f *fixture) post(pathQuery string, form url.Values, token string) *httptest.ResponseRecorder {
	req := httptest.NewRequest("POST", pathQuery, strings.NewReader(form.Encode()))
	twiliofake.SetCallback(req, twiliofake.Sign(authToken, base+pathQuery, form))
	if token != "" {
		req.Header.Set(twilio.IdempotencyHeader, token)
	}
	rec := httptest.NewRecorder()
	f.h.ServeHTTP(rec, req)
	// TwiML answers are checked by the tests (the validator decodes no
	// XML); every other answer against the document.
	if rec.Code == http.StatusOK {
		if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/xml") {
			f.t.Errorf("POST %s -> 200 with Content-Type %q, want text/xml", pathQuery, ct)
		}
	} else if err := spectest.Validator(f.t).Check(req, rec.Code, rec.Header(), rec.Body.Bytes()); err != nil {
		f.t.Errorf("POST %s -> %d %s: not as the OpenAPI document says: %v", pathQuery, rec.Code, rec.Body, err)
	}
	return rec
}

func answerPath(sid string) string { return strings.TrimPrefix(twilio.AnswerURL(base, sid), base) }
func statusPath(sid string) string { return strings.TrimPrefix(twilio.StatusURL(base, sid), base) }

var answerForm = url.Values{"CallSid": {"CAfeed"}, "From": {callerID}, "To": {"+14155550100"}}

var actionAttr = regexp.MustCompile(`action="([^"]+)"`)

// action is the turn URL (path and query) a TwiML's Gather names.
func action(t *testing.T, twiml string) string {
	t.Helper()
	m := actionAttr.FindStringSubmatch(twiml)
	if m == nil {
		t.Fatalf("no Gather action in %s", twiml)
	}
	return strings.TrimPrefix(strings.ReplaceAll(m[1], "&amp;", "&"), base)
}

// testSimulator: the simulator's answered call names its conversation,
// which the hang-up ended; its failed calls name none.
func testSimulator(t *testing.T, f *fixture) {
	sim := &simulator.Simulator{Calls: f.svc, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Sleep: func(ctx context.Context, _ time.Duration) error { return ctx.Err() }}
	answered, busy := f.placed(t, "+14155550100"), f.placed(t, "+14155550001")
	for _, c := range []voiceops.Call{answered, busy} {
		must(t, sim.Place(context.Background(), telephony.CallRequest{SID: c.SID, AccountID: account, ProjectID: project, To: c.ToNumber, Metadata: c.Metadata}))
	}
	sim.Wait()
	got := f.call(t, answered.SID)
	if got.Status != voiceops.CallSuccess || got.ConversationID == "" {
		t.Fatalf("answered call: status %s, conversation %q", got.Status, got.ConversationID)
	}
	conv, err := f.env.Stores.Conversations.GetConversation(context.Background(), account, project, got.ConversationID)
	if err != nil || conv.Channel != voiceops.ChannelVoice || conv.ToNumber != answered.ToNumber || conv.FromNumber != simulator.DefaultCallerID ||
		conv.IntegrationAttributes["first_name"] != "Ada" || conv.InProgress || conv.NumTurns < 3 {
		t.Errorf("the call's conversation: %+v %v", conv, err)
	}
	if b := f.call(t, busy.SID); b.Status != voiceops.CallFailure || b.ConversationID != "" {
		t.Errorf("busy call: %s, conversation %q", b.Status, b.ConversationID)
	}
	if n := len(f.conversations(t)); n != 1 {
		t.Errorf("%d conversations, want 1", n)
	}
}

// testAnswerReplayed: the same signed answer three times gets the same
// TwiML three times and leaves one conversation.
func testAnswerReplayed(t *testing.T, f *fixture) {
	c := f.placed(t, "+14155550100")
	var first string
	for i, token := range []string{"tok-a", "tok-a", ""} {
		rec := f.post(answerPath(c.SID), answerForm, token)
		if rec.Code != 200 || !strings.Contains(rec.Body.String(), "<Gather") {
			t.Fatalf("answer %d: %d %s", i+1, rec.Code, rec.Body)
		}
		if i == 0 {
			first = rec.Body.String()
		} else if rec.Body.String() != first {
			t.Errorf("answer %d:\n%s\nwant the first answer's TwiML:\n%s", i+1, rec.Body, first)
		}
	}
	convs := f.conversations(t)
	got := f.call(t, c.SID)
	if len(convs) != 1 || convs[0].ID != got.ConversationID || !convs[0].InProgress {
		t.Errorf("after 3 answers: %d conversations (want 1, the call's %q, in progress)", len(convs), got.ConversationID)
	}
	// A replay after a turn still gets the greeting, and runs nothing.
	rec := f.post(action(t, first), url.Values{"SpeechResult": {"balance"}}, "")
	if rec.Code != 200 {
		t.Fatalf("turn: %d %s", rec.Code, rec.Body)
	}
	if rec := f.post(answerPath(c.SID), answerForm, ""); rec.Code != 200 || rec.Body.String() != first {
		t.Errorf("answer after a turn: %d %s", rec.Code, rec.Body)
	}
	if convs := f.conversations(t); len(convs) != 1 || convs[0].NumTurns != 2 {
		t.Errorf("after the turn and a replayed answer: %d conversations, %+v", len(convs), convs)
	}
}

// testAnswersAtOnce: 6 answers at once (a retry racing the first) start
// one conversation; each gets the same TwiML.
func testAnswersAtOnce(t *testing.T, f *fixture) {
	c := f.placed(t, "+14155550100")
	const n = 6
	var wg sync.WaitGroup
	bodies := make([]string, n)
	codes := make([]int, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rec := f.post(answerPath(c.SID), answerForm, "")
			codes[i], bodies[i] = rec.Code, rec.Body.String()
		}()
	}
	wg.Wait()
	for i := range n {
		if codes[i] != 200 || bodies[i] != bodies[0] {
			t.Errorf("answer %d: %d %s (first: %s)", i, codes[i], bodies[i], bodies[0])
		}
	}
	if convs := f.conversations(t); len(convs) != 1 || convs[0].ID != f.call(t, c.SID).ConversationID {
		t.Errorf("%d conversations, want 1: the call's", len(convs))
	}
}

// testAnswerAfterEnd: an answer for a call that has ended hangs up and
// starts nothing.
func testAnswerAfterEnd(t *testing.T, f *fixture) {
	for _, st := range []string{"completed", "busy", "canceled"} {
		c := f.placed(t, "+14155550100")
		if rec := f.post(statusPath(c.SID), url.Values{"CallStatus": {st}}, ""); rec.Code != http.StatusNoContent {
			t.Fatalf("%s: %d %s", st, rec.Code, rec.Body)
		}
		rec := f.post(answerPath(c.SID), answerForm, "")
		want := `<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<Response><Hangup/></Response>`
		if rec.Code != 200 || rec.Body.String() != want {
			t.Errorf("answer after %s: %d %s, want %s", st, rec.Code, rec.Body, want)
		}
		if got := f.call(t, c.SID); got.ConversationID != "" || got.Steps != 0 {
			t.Errorf("after %s, the answer left conversation %q, %d steps", st, got.ConversationID, got.Steps)
		}
	}
	if n := len(f.conversations(t)); n != 0 {
		t.Errorf("%d conversations, want none", n)
	}
}

// testTurnReplayed: a replayed turn (same token, no token, another token:
// its URL's number decides) gets the stored TwiML and stores nothing; an
// older turn replayed after a newer one is 409; a URL that names no turn
// is 400 and runs nothing.
func testTurnReplayed(t *testing.T, f *fixture) {
	c := f.placed(t, "+14155550100")
	rec := f.post(answerPath(c.SID), answerForm, "tok-answer")
	turn1 := action(t, rec.Body.String())
	if !strings.Contains(turn1, "?"+twilio.TurnParam+"=1") {
		t.Fatalf("the first Gather's action %s does not number the turn", turn1)
	}
	speech := url.Values{"SpeechResult": {"balance"}}
	first := f.post(turn1, speech, "tok-1")
	if first.Code != 200 || !strings.Contains(first.Body.String(), "<Gather") {
		t.Fatalf("turn 1: %d %s", first.Code, first.Body)
	}
	convID := f.call(t, c.SID).ConversationID
	turns := func() int {
		conv, err := f.env.Stores.Conversations.GetConversation(context.Background(), account, project, convID)
		must(t, err)
		return conv.NumTurns
	}
	if n := turns(); n != 2 {
		t.Fatalf("%d turns after turn 1, want 2", n)
	}
	for name, token := range map[string]string{"same token": "tok-1", "no token": "", "another token": "tok-forged"} {
		if rec := f.post(turn1, speech, token); rec.Code != 200 || rec.Body.String() != first.Body.String() {
			t.Errorf("turn 1 replayed (%s): %d %s, want the stored %s", name, rec.Code, rec.Body, first.Body)
		}
	}
	if n := turns(); n != 2 {
		t.Errorf("%d turns after the replays, want 2", n)
	}
	// Turn 2, then turn 1 again: 409, nothing stored.
	turn2 := action(t, first.Body.String())
	if rec := f.post(turn2, url.Values{"Digits": {"1"}}, "tok-2"); rec.Code != 200 {
		t.Fatalf("turn 2: %d %s", rec.Code, rec.Body)
	}
	if rec := f.post(turn1, speech, "tok-1"); rec.Code != http.StatusConflict {
		t.Errorf("turn 1 after turn 2: %d %s, want 409", rec.Code, rec.Body)
	}
	// A turn the call has not reached: 409.
	ahead := strings.Replace(turn2, twilio.TurnParam+"=2", twilio.TurnParam+"=7", 1)
	if rec := f.post(ahead, speech, ""); rec.Code != http.StatusConflict {
		t.Errorf("turn 7: %d %s, want 409", rec.Code, rec.Body)
	}
	// A URL naming no turn is refused (it would be a new step each time
	// it is sent), with or without the last step's token; nothing runs.
	bare := turn2[:strings.Index(turn2, "?")]
	for _, token := range []string{"tok-2", "tok-3", ""} {
		if rec := f.post(bare, url.Values{"Digits": {"1"}}, token); rec.Code != http.StatusBadRequest {
			t.Errorf("a turn URL without its number (token %q): %d %s, want 400", token, rec.Code, rec.Body)
		}
	}
	if n := turns(); n != 3 {
		t.Errorf("%d turns after the unnumbered callbacks, want 3", n)
	}
	if rec := f.post(turn1[:strings.Index(turn1, "?")]+"?"+twilio.TurnParam+"=x", speech, ""); rec.Code != http.StatusBadRequest {
		t.Errorf("a turn number that is not one: %d", rec.Code)
	}
}

// testStatusOrder: status reports never move a call backwards, and the
// end ends the call's conversation.
func testStatusOrder(t *testing.T, f *fixture) {
	c := f.placed(t, "+14155550100")
	if rec := f.post(answerPath(c.SID), answerForm, ""); rec.Code != 200 {
		t.Fatalf("answer: %d", rec.Code)
	}
	for _, st := range []string{"ringing", "in-progress", "completed", "ringing", "in-progress", "busy", "completed"} {
		if rec := f.post(statusPath(c.SID), url.Values{"CallStatus": {st}}, ""); rec.Code != http.StatusNoContent {
			t.Fatalf("%s: %d %s", st, rec.Code, rec.Body)
		}
	}
	got := f.call(t, c.SID)
	if got.Status != voiceops.CallSuccess || got.Reason != "" {
		t.Errorf("after completed then late reports: %s %q", got.Status, got.Reason)
	}
	conv, err := f.env.Stores.Conversations.GetConversation(context.Background(), account, project, got.ConversationID)
	if err != nil || conv.InProgress {
		t.Errorf("the call's conversation after the end: in progress %v, %v", conv.InProgress, err)
	}
	if rec := f.post(answerPath(c.SID), answerForm, ""); rec.Code != 200 || !strings.Contains(rec.Body.String(), "<Gather") {
		t.Errorf("a replayed answer after the end: %d %s", rec.Code, rec.Body)
	}
	if n := len(f.conversations(t)); n != 1 {
		t.Errorf("%d conversations, want 1", n)
	}
}

// gatedEngine stands in for an agent slower than Twilio waits: its turns
// wait for the gate (or their context's end), then the real engine
// answers. It counts the turns asked of it.
type gatedEngine struct {
	calls.Engine
	gate     chan struct{}
	mu       sync.Mutex
	responds int
}

func (e *gatedEngine) RespondCall(ctx context.Context, c voiceops.Call, message, dtmf string) (voiceops.CallReply, error) {
	e.mu.Lock()
	e.responds++
	e.mu.Unlock()
	select {
	case <-e.gate:
	case <-ctx.Done():
		return voiceops.CallReply{}, ctx.Err()
	}
	return e.Engine.RespondCall(ctx, c, message, dtmf)
}

// testSlowTurn: a turn slower than the callbacks' deadline (its work
// detached, as on the dev server) is answered with a filler and a
// redirect to its result; the fetches and Twilio's retries while it runs
// get the same; once the agent answers, the result is its answer, and the
// turn was asked of the agent once and committed once.
func testSlowTurn(t *testing.T, f *fixture) {
	agent := &gatedEngine{Engine: f.svc.Engine, gate: make(chan struct{})}
	defer func() {
		select {
		case <-agent.gate:
		default:
			close(agent.gate)
		}
	}()
	f.svc.Engine, f.svc.Detach = agent, func(work func()) { go work() }
	g := &twilioapi.Callbacks{Calls: f.svc, PublicBaseURL: base, Deadline: calls.ReplyMargin + 300*time.Millisecond,
		Creds: twiliocreds.Static{account: {AccountSID: twiliofake.AccountSID, AuthToken: authToken, FromNumber: callerID}}}
	f.h = httpapi.New(httpapi.Config{Now: time.Now, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}, g.Routes())
	c := f.placed(t, "+14155550100")
	// The greeting is not held back, but under a short deadline a slow
	// store can still outlast it: follow its redirect as Twilio does.
	greeting := f.post(answerPath(c.SID), answerForm, "").Body.String()
	for i := 0; i < 50 && strings.Contains(greeting, "<Redirect"); i++ {
		time.Sleep(20 * time.Millisecond)
		greeting = f.post(strings.TrimPrefix(twilio.AnswerResultURL(base, c.SID), base), answerForm, "").Body.String()
	}
	turn1 := action(t, greeting)
	convID := f.call(t, c.SID).ConversationID
	result1 := strings.TrimPrefix(twilio.TurnResultURL(base, c.SID, convID, 1), base)
	speech := url.Values{"SpeechResult": {"balance"}}
	for i, p := range []string{turn1, result1, turn1} {
		rec := f.post(p, speech, "tok-1")
		if rec.Code != 200 || !strings.Contains(rec.Body.String(), "<Redirect") || strings.Contains(rec.Body.String(), "<Gather") {
			t.Fatalf("POST %d %s while the agent works: %d %s", i, p, rec.Code, rec.Body)
		}
	}
	close(agent.gate)
	var answer string
	for range 20 {
		rec := f.post(result1, url.Values{}, "")
		if rec.Code != 200 {
			t.Fatalf("result: %d %s", rec.Code, rec.Body)
		}
		if !strings.Contains(rec.Body.String(), "<Redirect") {
			answer = rec.Body.String()
			break
		}
	}
	if !strings.Contains(answer, "<Gather") || !strings.Contains(answer, twilio.TurnParam+"=2") {
		t.Fatalf("the result once the agent answered: %q", answer)
	}
	if rec := f.post(turn1, speech, "tok-1"); rec.Code != 200 || rec.Body.String() != answer {
		t.Errorf("turn 1 replayed: %d %s, want the stored answer", rec.Code, rec.Body)
	}
	conv, err := f.env.Stores.Conversations.GetConversation(context.Background(), account, project, convID)
	must(t, err)
	agent.mu.Lock()
	defer agent.mu.Unlock()
	if conv.NumTurns != 2 || agent.responds != 1 {
		t.Errorf("%d turns, the agent asked %d times; want 2 turns and 1 ask", conv.NumTurns, agent.responds)
	}
}
