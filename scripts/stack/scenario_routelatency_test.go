//go:build stack

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/voiceops/opsapi/scripts/latency"
	"github.com/voiceops/opsapi/shared/calls/callstest/twiliofake"
	"github.com/voiceops/opsapi/shared/calls/telephony/twilio"
	"github.com/voiceops/opsapi/shared/platform/lambdamain"
	"github.com/voiceops/opsapi/shared/store/dynamo"
	"github.com/voiceops/opsapi/shared/testsupport/roundtrips"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// latencyReq is one request of a route and the status it must answer.
type latencyReq struct {
	method, url string
	header      map[string]string
	body        []byte
	status      int
}

// latencyRoute is a route measured by TestRouteLatency: prepare makes
// the request of one trial, doing untimed whatever it needs first (a
// conversation to answer, a silence to delete); after cleans up.
type latencyRoute struct {
	key     string // its roundtrips.Want key
	prepare func(t *testing.T) latencyReq
	after   func(t *testing.T, answer []byte) // untimed, with the trial's answer; may be nil
}

// Per-route latency through the stack against the bare function (one
// DynamoDB GetItem behind the same local API Gateway, RIE and AWS
// endpoint): after warm-up requests, each trial is a request of the
// route then one of the bare function (A/B pairs), so both see the same
// moment of the machine. STACK_ROUTE_TRIALS pairs per route (5 by
// default; 100 for docs/performance.md); STACK_ROUTES, a regular
// expression, times only the routes it matches; the routes
// STACK_ROUTE_BREAKDOWN matches (by default the two lists; "" none) are
// broken down (breakdown.log). The schedules are paused and the queues
// drained first (quietBackground). Figures only: it asserts that every
// request answered its status and that every route measured has a row in
// roundtrips.Want.
func TestRouteLatency(t *testing.T) {
	ctx := context.Background()
	bare, err := st.ServeBare(ctx)
	if err != nil {
		t.Fatal(err)
	}
	routes := latencyRoutes(t)
	for _, r := range routes {
		if _, ok := roundtrips.Want[r.key]; !ok {
			t.Fatalf("%s has no row in roundtrips.Want", r.key)
		}
	}
	only, err := regexp.Compile(os.Getenv("STACK_ROUTES"))
	if err != nil {
		t.Fatalf("STACK_ROUTES: %v", err)
	}
	broken := `/conversations$`
	if v, ok := os.LookupEnv("STACK_ROUTE_BREAKDOWN"); ok {
		broken = v
	}
	breakRE, err := regexp.Compile(broken)
	if err != nil {
		t.Fatalf("STACK_ROUTE_BREAKDOWN: %v", err)
	}
	quietBackground(t)
	var tr tracer
	tr.observe(t)
	bareReq := latencyReq{method: "GET", url: bare, status: 200}
	trials := envInt("STACK_ROUTE_TRIALS", 5) // about 20 s for the 22 routes
	const warmUp = 2
	t.Logf("%d pairs per route, %d warm-up pairs; ratio = route p50 / bare p50, pairs = min–max of route / bare per pair", trials, warmUp)
	t.Logf("%-78s %3s  %-52s %-30s %6s  %s", "route", "seq", "route", "bare (GetItem)", "ratio", "pairs")
	for _, r := range routes {
		if !only.MatchString(r.key) {
			continue
		}
		var fn, b []time.Duration
		var bd *breakdown
		var function string
		if broken != "" && breakRE.MatchString(r.key) {
			bd, function = &breakdown{}, routeFunction(t, r.key)
		}
		for i := range warmUp + trials {
			req := r.prepare(t)
			trace := tr.start(function)
			d, answer, id := timeRequest(t, r.key, req)
			tr.stop()
			if r.after != nil {
				r.after(t, answer)
			}
			if bd != nil && i >= warmUp {
				trace.handler = accessDuration(trace.function, id)
				bd.route, bd.total = append(bd.route, trace), append(bd.total, d)
				if strings.HasSuffix(r.key, "/conversations") {
					bd.pages = append(bd.pages, listPage(t, answer))
				}
			}
			trace = tr.start(bareFunction)
			db, _, id := timeRequest(t, "bare", bareReq)
			tr.stop()
			if bd != nil && i >= warmUp {
				trace.handler = accessDuration(trace.function, id)
				bd.bare, bd.bareTotal = append(bd.bare, trace), append(bd.bareTotal, db)
			}
			if i >= warmUp {
				fn, b = append(fn, d), append(b, db)
			}
		}
		if bd != nil && len(bd.pages) > 0 {
			bd.project, bd.tableItems = projectConversations(t, st.Credentials.Accounts[0].AccountID, st.Credentials.Accounts[0].Projects[0].ProjectID)
		}
		ratios := make([]float64, len(fn))
		for i := range fn {
			ratios[i] = float64(fn[i]) / float64(b[i])
		}
		rp50, bp50 := latency.Quantile(fn, 0.5), latency.Quantile(b, 0.5)
		t.Logf("%-78s %3d  %-52s %-30s %5.1fx  %.1f–%.1f", r.key, roundtrips.Want[r.key].Sequential(),
			strings.TrimPrefix(latency.Summary(fn), fmt.Sprintf("n %d, ", len(fn))),
			fmt.Sprintf("p50 %v, %s", bp50.Round(time.Millisecond), p99(b)),
			float64(rp50)/float64(bp50), slices.Min(ratios), slices.Max(ratios))
		if bd != nil {
			bd.log(t, r.key)
		}
	}
}

// p99 is the p99 of d, or its maximum said as such below latency.MinP99
// trials.
func p99(d []time.Duration) string {
	if len(d) < latency.MinP99 {
		return fmt.Sprintf("max %v", slices.Max(d).Round(time.Millisecond))
	}
	return fmt.Sprintf("p99 %v", latency.Quantile(d, 0.99).Round(time.Millisecond))
}

// keyUsed keeps each API key under its rate limit (25 requests a second
// by default): a 429 would fail the trial, and the limit is not what is
// measured. The wait comes before a trial's clock starts.
var keyUsed = map[string]time.Time{}

const keyInterval = 45 * time.Millisecond

func pace(header map[string]string) {
	for k, v := range header {
		if k = strings.ToLower(k); k == "x-api-key" || k == "x-service-auth-token" {
			time.Sleep(time.Until(keyUsed[v].Add(keyInterval)))
			keyUsed[v] = time.Now()
		}
	}
}

// timeRequest sends r and returns the time to its whole answer, the
// answer and its X-Request-Id; it fails the test on another status.
func timeRequest(t *testing.T, route string, r latencyReq) (time.Duration, []byte, string) {
	t.Helper()
	req, err := http.NewRequest(r.method, r.url, bytes.NewReader(r.body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range r.header {
		req.Header.Set(k, v)
	}
	pace(r.header)
	start := time.Now()
	resp, err := scenarioClient.Do(req)
	if err != nil {
		t.Fatalf("%s: %v", route, err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	d := time.Since(start)
	if err != nil {
		t.Fatalf("%s: %v", route, err)
	}
	if resp.StatusCode != r.status {
		t.Fatalf("%s: %s %s answered %d %s, want %d", route, r.method, r.url, resp.StatusCode, b, r.status)
	}
	return d, b, resp.Header.Get("X-Request-Id")
}

func jsonBody(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// do sends a request outside the measure (a trial's preparation) and
// decodes its JSON answer into out.
func (r latencyReq) do(t *testing.T, out any) {
	t.Helper()
	var body any
	if r.body != nil {
		body = json.RawMessage(r.body)
	}
	pace(r.header)
	code, _, b := call(t, r.method, r.url, r.header, body, out)
	if code != r.status {
		t.Fatalf("%s %s: %d %s, want %d", r.method, r.url, code, b, r.status)
	}
}

// latencyRoutes are a representative route of each HTTP function and
// every route of four sequential round trips or more
// (docs/performance.md), each with what its trials need.
func latencyRoutes(t *testing.T) []latencyRoute {
	acct := st.Credentials.Accounts[0]
	proj := acct.Projects[0]
	studio, base := st.Credentials.AgentStudioURL, st.Credentials.BaseURL
	key := map[string]string{"x-api-key": acct.APIKey, "Content-Type": "application/json"}
	internal := map[string]string{"X-Internal-Key": st.Credentials.InternalKey, "Content-Type": "application/json"}
	chatKeys := map[string]string{"X-API-KEY": proj.APIKey, "X-TOKEN": proj.AgentToken, "Content-Type": "application/json"}
	events := map[string]string{"x-api-key": proj.EventsKey, "Content-Type": "application/json"}
	service := map[string]string{"X-Service-Auth-Token": proj.ServiceAuthToken, "Content-Type": "application/json"}
	tenant := map[string]any{"account_id": acct.AccountID, "project_id": proj.ProjectID}
	with := func(m map[string]any, kv ...any) map[string]any {
		out := map[string]any{}
		for k, v := range m {
			out[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			out[kv[i].(string)] = kv[i+1]
		}
		return out
	}

	// A rule (removed at the end: an account holds ten), a silence to
	// delete, an endpoint at a local receiver and a delivery of it.
	var rule struct{ ID string }
	latencyReq{"POST", studio + "/v1/alert-rules", key, jsonBody(t, map[string]any{"name": "latency", "project_id": proj.ProjectID,
		"metric": "turn_latency_p95", "operator": ">", "threshold_value": 1500, "window_duration": "5m"}), 201}.do(t, &rule)
	rcSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	var ep struct{ ID string }
	latencyReq{"POST", studio + "/v1/webhook-endpoints", key, jsonBody(t, map[string]any{"name": "latency", "url": rcSrv.URL,
		"event_types": []string{"alerts.triggered"}}), 201}.do(t, &ep)
	t.Cleanup(func() {
		call(t, "DELETE", studio+"/v1/alert-rules/"+rule.ID, key, nil, nil)
		call(t, "DELETE", studio+"/v1/webhook-endpoints/"+ep.ID, key, nil, nil)
		rcSrv.Close()
	})
	epURL := studio + "/v1/webhook-endpoints/" + ep.ID
	var test struct {
		DeliveryID string `json:"delivery_id"`
	}
	latencyReq{"POST", epURL + "/test", key, nil, 202}.do(t, &test)
	silence := func() latencyReq {
		return latencyReq{"POST", studio + "/v1/silences", key, jsonBody(t, map[string]any{"ends_at": time.Now().Add(time.Hour).UTC().Format(time.RFC3339),
			"comment": "latency", "matchers": []map[string]string{{"name": "project_id", "value": proj.ProjectID}}}), 201}
	}
	chat := base + "/v1/" + acct.AccountID + "/" + proj.ProjectID + "/chat/"
	conversation := func(t *testing.T, message string) string {
		var c struct {
			ConversationID string `json:"conversation_id"`
		}
		latencyReq{"POST", chat + "create", chatKeys, []byte(`{"channel":"webchat"}`), 200}.do(t, &c)
		if message != "" {
			latencyReq{"POST", chat + "respond", chatKeys, jsonBody(t, map[string]any{"conversation_id": c.ConversationID, "message": message}), 200}.do(t, nil)
		}
		return c.ConversationID
	}
	handedOff := conversation(t, "I want a human")
	var voice struct {
		ConversationID string `json:"conversation_id"`
	}
	latencyReq{"POST", base + "/internal/v1/voice/calls", internal, jsonBody(t, with(tenant, "from_number", "+441632960001", "to_number", "+441632960002")), 200}.do(t, &voice)
	twilioCalls := twilioCalls(t, acct.AccountID, proj.ProjectID)
	var trig struct{ CallSid string }
	latencyReq{"POST", base + "/v1/outbound-calling/trigger", service, []byte(`{"to_number":"+14155550100"}`), 200}.do(t, &trig)
	webhook := base + "/v1/external-events/webhook?" + url.Values{"event_id_location": {"payload"}, "event_id_path": {"ref"},
		"account_id": {acct.AccountID}, "project_id": {proj.ProjectID}}.Encode()
	v3 := base + "/v3/" + acct.AccountID + "/" + proj.ProjectID + "/conversations?limit=10"

	fixed := func(r latencyReq) func(*testing.T) latencyReq { return func(*testing.T) latencyReq { return r } }
	retried, retries := test, 0
	threshold := 1500
	return []latencyRoute{
		{key: "studio GET /v1/alert-rules/{rule_id}", prepare: fixed(latencyReq{"GET", studio + "/v1/alert-rules/" + rule.ID, key, nil, 200})},
		{key: "studio PATCH /v1/alert-rules/{rule_id}", prepare: func(t *testing.T) latencyReq {
			threshold++
			return latencyReq{"PATCH", studio + "/v1/alert-rules/" + rule.ID, key, jsonBody(t, map[string]any{"threshold_value": threshold}), 200}
		}},
		{key: "studio GET /v1/alert-rules/{rule_id}/history", prepare: fixed(latencyReq{"GET", studio + "/v1/alert-rules/" + rule.ID + "/history", key, nil, 200})},
		{key: "studio POST /v1/silences", prepare: func(*testing.T) latencyReq { return silence() },
			// An account holds at most 100 silences not ended.
			after: func(t *testing.T, answer []byte) {
				var s struct{ ID string }
				if err := json.Unmarshal(answer, &s); err != nil {
					t.Fatal(err)
				}
				latencyReq{"DELETE", studio + "/v1/silences/" + s.ID, key, nil, 204}.do(t, nil)
			}},
		{key: "studio DELETE /v1/silences/{silence_id}", prepare: func(t *testing.T) latencyReq {
			var s struct{ ID string }
			silence().do(t, &s)
			return latencyReq{"DELETE", studio + "/v1/silences/" + s.ID, key, nil, 204}
		}},
		{key: "studio POST /internal/v1/metric-events", prepare: fixed(latencyReq{"POST", studio + "/internal/v1/metric-events", internal,
			jsonBody(t, map[string]any{"events": []map[string]any{with(tenant, "metric", "activity")}}), 202})},
		{key: "studio GET /v1/webhook-endpoints/{endpoint_id}", prepare: fixed(latencyReq{"GET", epURL, key, nil, 200})},
		{key: "studio PATCH /v1/webhook-endpoints/{endpoint_id}", prepare: fixed(latencyReq{"PATCH", epURL, key, []byte(`{"name":"latency 2"}`), 200})},
		{key: "studio POST /v1/webhook-endpoints/{endpoint_id}/test", prepare: fixed(latencyReq{"POST", epURL + "/test", key, nil, 202})},
		{key: "studio GET /v1/webhook-endpoints/{endpoint_id}/deliveries/{delivery_id}/payload",
			prepare: fixed(latencyReq{"GET", epURL + "/deliveries/" + test.DeliveryID + "/payload", key, nil, 200})},
		{key: "studio POST /v1/webhook-endpoints/{endpoint_id}/deliveries/{delivery_id}/retry",
			prepare: func(t *testing.T) latencyReq {
				// A delivery takes at most 100 attempts: a new test event
				// every 50 retries.
				if retries++; retries%50 == 0 {
					latencyReq{"POST", epURL + "/test", key, nil, 202}.do(t, &retried)
				}
				waitAttempted(t, acct.AccountID, ep.ID, retried.DeliveryID) // a delivery is retried once its attempt is done
				return latencyReq{"POST", epURL + "/deliveries/" + retried.DeliveryID + "/retry", key, nil, 202}
			}},
		{key: "base POST /{version}/{account_id}/{project_id}/chat/respond", prepare: func(t *testing.T) latencyReq {
			return latencyReq{"POST", chat + "respond", chatKeys, jsonBody(t, map[string]any{"conversation_id": conversation(t, ""), "message": "balance"}), 200}
		}},
		{key: "base PUT /{version}/{account_id}/{project_id}/chat/close", prepare: func(t *testing.T) latencyReq {
			return latencyReq{"PUT", chat + "close", chatKeys, jsonBody(t, map[string]any{"conversation_id": conversation(t, "")}), 200}
		}},
		{key: "base GET /v1/{account_id}/{project_id}/handoff_state", prepare: fixed(latencyReq{"GET", base + "/v1/" + acct.AccountID + "/" + proj.ProjectID + "/handoff_state?id=" + handedOff,
			map[string]string{"x-api-key": proj.APIKey}, nil, 200})},
		{key: "base GET /v3/{account_id}/{project_id}/conversations", prepare: fixed(latencyReq{"GET", v3, map[string]string{"x-api-key": proj.APIKey}, nil, 200})},
		{key: "base GET /v1/{account_id}/{project_id}/conversations", prepare: fixed(latencyReq{"GET", strings.Replace(v3, "/v3/", "/v1/", 1), map[string]string{"x-api-key": proj.APIKey}, nil, 200})},
		{key: "base POST /internal/v1/voice/calls/{conversation_id}/turns", prepare: fixed(latencyReq{"POST", base + "/internal/v1/voice/calls/" + voice.ConversationID + "/turns", internal,
			jsonBody(t, with(tenant, "transcript", "balance")), 200})},
		{key: "base POST /v1/telephony/twilio/{callSid}/answer", prepare: func(t *testing.T) latencyReq { return twilioCalls.answer(t, twilioCalls.queued(t)) }},
		{key: "base POST /v1/telephony/twilio/{callSid}/turns/{conversation_id}", prepare: func(t *testing.T) latencyReq {
			sid := twilioCalls.queued(t)
			a := twilioCalls.answer(t, sid)
			var twiml string
			a.send(t, &twiml)
			return twilioCalls.turn(t, twiml)
		}},
		{key: "base GET /v1/outbound-calling/{callSid}/status", prepare: fixed(latencyReq{"GET", base + "/v1/outbound-calling/" + trig.CallSid + "/status", service, nil, 200})},
		{key: "base POST /v1/outbound-calling/trigger", prepare: fixed(latencyReq{"POST", base + "/v1/outbound-calling/trigger", service, []byte(`{"to_number":"+14155550100"}`), 200})},
		{key: "base POST /v1/external-events/webhook", prepare: func(t *testing.T) latencyReq {
			return latencyReq{"POST", webhook, events, jsonBody(t, map[string]any{"ref": conversation(t, ""), "status": "paid"}), 201}
		}},
		{key: "base POST /internal/v1/agentic-dial/bridge-ended", prepare: func(t *testing.T) latencyReq {
			// The call lasted as long as the conversation before its
			// handoff, read from its item: a time taken here would count
			// the create's way to the function, which on a busy machine
			// can make the call longer than the conversation (400).
			id := conversation(t, "I want a human")
			call := math.Ceil(handoffAfter(t, acct.AccountID, proj.ProjectID, id).Seconds())
			return latencyReq{"POST", base + "/internal/v1/agentic-dial/bridge-ended", events,
				jsonBody(t, map[string]any{"conversation_id": id, "bridge_duration_seconds": 0, "call_duration_seconds": call}), 200}
		}},
	}
}

// handoffAfter is how long the handed-off conversation ran before its
// handoff, read from its table.
func handoffAfter(t *testing.T, account, project, conversationID string) time.Duration {
	t.Helper()
	convs := dynamo.NewConversations(dynamodb.NewFromConfig(st.AWS), st.Topology.TableNames().Conversations)
	c, err := convs.GetConversation(context.Background(), account, project, conversationID)
	if err != nil {
		t.Fatal(err)
	}
	if c.EndedAt == nil {
		t.Fatalf("conversation %s has not ended: no handoff", conversationID)
	}
	return c.EndedAt.Sub(c.StartedAt)
}

// waitAttempted waits until the delivery's attempt is done (not
// pending), read from its table.
func waitAttempted(t *testing.T, account, endpointID, deliveryID string) {
	t.Helper()
	names := st.Topology.TableNames()
	deliveries := dynamo.NewDeliveries(dynamodb.NewFromConfig(st.AWS), names.Deliveries)
	deadline := time.Now().Add(15 * time.Second)
	for {
		d, err := deliveries.GetDelivery(context.Background(), account, endpointID, deliveryID)
		if err != nil {
			t.Fatal(err)
		}
		if d.Status != voiceops.DeliveryPending {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("delivery %s still pending after 15 s", deliveryID)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// send makes a request outside the measure and returns its body as text.
func (r latencyReq) send(t *testing.T, body *string) {
	t.Helper()
	req, err := http.NewRequest(r.method, r.url, bytes.NewReader(r.body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range r.header {
		req.Header.Set(k, v)
	}
	pace(r.header)
	resp, err := scenarioClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != r.status {
		t.Fatalf("%s %s: %d %s, want %d", r.method, r.url, resp.StatusCode, b, r.status)
	}
	*body = string(b)
}

// twilioCallbacks makes Twilio's signed callbacks about calls it stores
// as the outbound trigger does, the account's Twilio credentials those
// of twiliofake (as TestOutboundCallThroughTwilio sets them); the Twilio
// API stand-in takes the calls the trigger's trials place.
type twilioCallbacks struct {
	calls            *dynamo.Calls
	account, project string
}

func twilioCalls(t *testing.T, account, project string) *twilioCallbacks {
	var secretID string
	for _, f := range st.Topology.Functions {
		if id := f.Env[lambdamain.TwilioSecretEnv]; id != "" {
			secretID = id
		}
	}
	if secretID == "" {
		t.Fatal("no function reads the Twilio secret")
	}
	if err := twilio.SetAccount(context.Background(), secretsmanager.NewFromConfig(st.AWS), secretID, account,
		twilio.Account{AccountSID: twiliofake.AccountSID, AuthToken: twiliofake.AuthToken, FromNumber: twiliofake.FromNumber}); err != nil {
		t.Fatal(err)
	}
	api := &twiliofake.API{}
	twilioStandIn.set(api.ServeHTTP)
	t.Cleanup(func() {
		twilioStandIn.set(nil)
		if bad := api.Bad(); len(bad) != 0 {
			t.Errorf("the Twilio stand-in got bad requests: %v", bad)
		}
	})
	return &twilioCallbacks{calls: dynamo.NewCalls(dynamodb.NewFromConfig(st.AWS), st.Topology.TableNames().Calls), account: account, project: project}
}

// queued stores a queued outbound call and returns its SID.
func (c *twilioCallbacks) queued(t *testing.T) string {
	t.Helper()
	sid := voiceops.NewCallSID()
	if err := c.calls.CreateCall(context.Background(), voiceops.Call{SID: sid, AccountID: c.account, ProjectID: c.project, ToNumber: "+14155550100",
		Status: voiceops.CallQueued, CreatedAt: time.Now().UTC()}); err != nil {
		t.Fatal(err)
	}
	return sid
}

func (c *twilioCallbacks) signed(fullURL string, form url.Values) latencyReq {
	return latencyReq{"POST", fullURL, map[string]string{"Content-Type": "application/x-www-form-urlencoded",
		"X-Twilio-Signature": twiliofake.Sign(twiliofake.AuthToken, fullURL, form)}, []byte(form.Encode()), 200}
}

func (c *twilioCallbacks) answer(t *testing.T, sid string) latencyReq {
	return c.signed(st.Credentials.BaseURL+"/v1/telephony/twilio/"+sid+"/answer", url.Values{"CallSid": {sid}, "CallStatus": {"in-progress"},
		"From": {twiliofake.FromNumber}, "To": {"+14155550100"}})
}

var gatherAction = regexp.MustCompile(`action="([^"]+)"`)

// turn is the callback of a speech turn to the Gather action of an
// answer's TwiML.
func (c *twilioCallbacks) turn(t *testing.T, twiml string) latencyReq {
	t.Helper()
	m := gatherAction.FindStringSubmatch(twiml)
	if m == nil {
		t.Fatalf("answer %s: no turn URL", twiml)
	}
	return c.signed(html.UnescapeString(m[1]), url.Values{"SpeechResult": {"balance"}})
}
