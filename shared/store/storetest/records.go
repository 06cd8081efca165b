package storetest

import (
	"github.com/voiceops/opsapi/shared/testsupport/textfill"

	"fmt"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/platform/idempotency"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// RunWholeRecords runs the whole-record contract: every stored type of
// voiceops.Stores, with every field set (checkEveryFieldSet), is read back
// equal to what was written (checkWhole) by each read that returns it, and
// every field of each patch type reaches its change detection and the
// store (patches.go).
func RunWholeRecords(t *testing.T, newStores func(t *testing.T) voiceops.Stores) {
	t.Helper()
	t.Run("Account", func(t *testing.T) { testWholeAccount(t, newStores(t)) })
	t.Run("Key", func(t *testing.T) { testWholeKey(t, newStores(t)) })
	t.Run("Rule", func(t *testing.T) { testWholeRule(t, newStores(t)) })
	t.Run("Endpoint", func(t *testing.T) { testWholeEndpoint(t, newStores(t)) })
	t.Run("Event", func(t *testing.T) { testWholeEvent(t, newStores(t)) })
	t.Run("Delivery", func(t *testing.T) { testWholeDelivery(t, newStores(t)) })
	t.Run("Conversation", func(t *testing.T) { testWholeConversation(t, newStores(t)) })
	t.Run("RulePatch", func(t *testing.T) { testRulePatchFields(t, newStores(t)) })
	t.Run("EndpointPatch", func(t *testing.T) { testEndpointPatchFields(t, newStores(t)) })
}

func testWholeAccount(t *testing.T, s voiceops.Stores) {
	a := mustAccount(t, s)
	p := mustProject(t, s, a.ID)
	checkEveryFieldSet(t, "account", a)
	checkEveryFieldSet(t, "project", p)
	got, err := s.Accounts.GetAccount(ctx(t), a.ID)
	mustNil(t, "GetAccount", err)
	checkAccount(t, "GetAccount", a, got)
	as, err := s.Accounts.ListAccounts(ctx(t))
	mustNil(t, "ListAccounts", err)
	checkWhole(t, "ListAccounts", []voiceops.Account{a}, as)
	gp, err := s.Accounts.GetProject(ctx(t), a.ID, p.ID)
	mustNil(t, "GetProject", err)
	checkProject(t, "GetProject", p, gp)
	ps, err := s.Accounts.ListProjects(ctx(t), a.ID)
	mustNil(t, "ListProjects", err)
	checkWhole(t, "ListProjects", []voiceops.Project{p}, ps)
}

func testWholeKey(t *testing.T, s voiceops.Stores) {
	a := mustAccount(t, s)
	p := mustProject(t, s, a.ID)
	k := newAgentKey(a.ID, p.ID, at(2))
	mustNil(t, "CreateKey", s.Accounts.CreateKey(ctx(t), k))
	revoked, err := s.Accounts.RevokeKey(ctx(t), a.ID, k.ID, at(3))
	mustNil(t, "RevokeKey", err)
	k.RevokedAt = ptr(at(3))
	checkEveryFieldSet(t, "key", k)
	checkWhole(t, "RevokeKey", k, revoked)
	got, err := s.Accounts.KeyByDigest(ctx(t), k.Digest)
	mustNil(t, "KeyByDigest", err)
	checkKey(t, "KeyByDigest", k, got)
	ks, err := s.Accounts.ListKeys(ctx(t), a.ID)
	mustNil(t, "ListKeys", err)
	checkWhole(t, "ListKeys", []voiceops.Key{k}, ks)
}

// fullRule returns a rule of the project with every field set, n making
// each field differ from another n's.
func fullRule(accountID, projectID string, n int) voiceops.AlertRule {
	r := newRule(accountID, n)
	r.ProjectID, r.State, r.Since = ptr(projectID), voiceops.StateAlert, ptr(at(n+1))
	r.LastEvaluatedAt, r.CurrentValue, r.Sequence = ptr(at(n+2)), ptr(int64(n+40)), int64(n+3)
	textfill.Fill(&r, fmt.Sprint(n)) // a new text field is in the tests with no edit here
	return r
}

func testWholeRule(t *testing.T, s voiceops.Stores) {
	a := mustAccount(t, s)
	p := mustProject(t, s, a.ID)
	r := fullRule(a.ID, p.ID, 10)
	checkEveryFieldSet(t, "rule", r)
	mustNil(t, "CreateRule", s.Rules.CreateRule(ctx(t), r))
	checkRuleReads(t, s, r)

	// A replacement with every field changed.
	p2 := mustProject(t, s, a.ID)
	u := fullRule(a.ID, p2.ID, 20)
	u.ID, u.CreatedAt, u.Version = r.ID, r.CreatedAt, r.Version+1
	u.Metric, u.Operator, u.Window, u.State = voiceops.MetricCallCrashes, voiceops.OpLessEqual, voiceops.Window60m, voiceops.StateOK
	mustNil(t, "UpdateRule", s.Rules.UpdateRule(ctx(t), u, r.Version, true))
	checkRuleReads(t, s, u)
}

// checkRuleReads checks every read that returns the enabled rule r.
func checkRuleReads(t *testing.T, s voiceops.Stores, r voiceops.AlertRule) {
	t.Helper()
	got, err := s.Rules.GetRule(ctx(t), r.AccountID, r.ID)
	mustNil(t, "GetRule", err)
	checkRule(t, "GetRule", r, got)
	checkWhole(t, "ListRules", []voiceops.AlertRule{r}, listRules(t, s, r.AccountID))
	enabled, err := s.Rules.ListEnabledRules(ctx(t), voiceops.RuleShardOf(r.AccountID))
	mustNil(t, "ListEnabledRules", err)
	checkWhole(t, "ListEnabledRules", []voiceops.AlertRule{r}, enabled)
}

// fullEndpoint returns an endpoint with every field set, n making each
// field differ from another n's.
func fullEndpoint(accountID string, n int) voiceops.WebhookEndpoint {
	e := newEndpoint(accountID, n)
	e.EventTypes = []voiceops.EventType{voiceops.EventResolved, voiceops.EventTriggered}[:1+n%2]
	e.Headers = map[string]string{"X-Team": "ops \u00e9", "X-N": time.Duration(n).String()}
	e.TimeoutMS = int64(1000 + n)
	e.PreviousSecret, e.PreviousExpiresAt = "whsec_"+voiceops.RandomBase62(43), ptr(at(n+1))
	// A kind and a routing key, so the round trip covers them; the stores
	// keep records as given (the API checks which fields fit a kind).
	e.Kind, e.RoutingKey = []voiceops.EndpointKind{voiceops.EndpointPagerDuty, voiceops.EndpointSlack}[n%2], voiceops.RandomBase62(32)
	return e
}

func testWholeEndpoint(t *testing.T, s voiceops.Stores) {
	a := mustAccount(t, s)
	e := fullEndpoint(a.ID, 10)
	checkEveryFieldSet(t, "endpoint", e)
	mustNil(t, "CreateEndpoint", s.Endpoints.CreateEndpoint(ctx(t), e))
	checkEndpointReads(t, s, e)

	u := fullEndpoint(a.ID, 21)
	u.ID, u.CreatedAt, u.Version = e.ID, e.CreatedAt, e.Version+1
	mustNil(t, "UpdateEndpoint", s.Endpoints.UpdateEndpoint(ctx(t), u, e.Version))
	checkEndpointReads(t, s, u)
}

func checkEndpointReads(t *testing.T, s voiceops.Stores, e voiceops.WebhookEndpoint) {
	t.Helper()
	got, err := s.Endpoints.GetEndpoint(ctx(t), e.AccountID, e.ID)
	mustNil(t, "GetEndpoint", err)
	checkEndpoint(t, "GetEndpoint", e, got)
	checkWhole(t, "ListEndpoints", []voiceops.WebhookEndpoint{e}, listEndpoints(t, s, e.AccountID))
}

func testWholeEvent(t *testing.T, s voiceops.Stores) {
	e := newEvent("acct_a", recent(3))
	e.EndpointID, e.FannedOut = voiceops.NewID(voiceops.PrefixEndpoint), true
	checkEveryFieldSet(t, "event", e)
	mustEvent(t, s, e)
	got, err := s.Events.GetEvent(ctx(t), e.AccountID, e.ID)
	mustNil(t, "GetEvent", err)
	checkEvent(t, "GetEvent", e, got)

	// A pending event as PendingEvents returns it.
	p := newEvent("acct_a", recent(4))
	p.EndpointID = voiceops.NewID(voiceops.PrefixEndpoint)
	mustEvent(t, s, p)
	pending, err := s.Events.PendingEvents(ctx(t), time.Now(), 10)
	mustNil(t, "PendingEvents", err)
	checkWhole(t, "PendingEvents", []voiceops.AlertEvent{p}, pending)
}

func testWholeDelivery(t *testing.T, s voiceops.Stores) {
	d := newDelivery("acct_a", voiceops.NewID(voiceops.PrefixEndpoint), recent(6))
	d.Test, d.EventType = true, voiceops.EventResolved
	mustDeliveries(t, s, d)
	// Attempts are written by RecordAttempt only: the second one open.
	d.Status, d.UpdatedAt, d.NextAttemptAt = voiceops.DeliveryFailed, recent(2), ptr(recent(1))
	d.Attempts = []voiceops.DeliveryAttempt{
		{Number: 1, At: recent(5), StatusCode: 503, DurationMS: 1234, Error: "503 Service Unavailable \u00e9"},
		{Number: 2, At: recent(3), StatusCode: 200, DurationMS: 7, Error: "slow"},
	}
	checkEveryFieldSet(t, "delivery", d)
	mustNil(t, "RecordAttempt", s.Deliveries.RecordAttempt(ctx(t), d, 0))
	checkDelivery(t, "GetDelivery", d, getDelivery(t, s, d))
	ds, err := s.Deliveries.ListDeliveries(ctx(t), d.AccountID, d.EndpointID, 10)
	mustNil(t, "ListDeliveries", err)
	checkWhole(t, "ListDeliveries", []voiceops.Delivery{d}, ds)
}

func testWholeConversation(t *testing.T, s voiceops.Stores) {
	c := newConversation("acct_a", "proj_a", at(0))
	// InProgress and the rest of an ended conversation together: the store
	// keeps what it is given, whatever the engine makes of it.
	c.InProgress = true
	c.Metrics = append(c.Metrics, voiceops.CustomMetric{Name: "tier", Value: "gold"})
	c.Metrics[1].Value = "silver"
	first, second := newTurn(0, at(1)), newTurn(1, at(2))
	second.IsSilence = true
	checkEveryFieldSet(t, "conversation", c)
	checkEveryFieldSet(t, "turn", second)
	mustConversation(t, s, c, &first)
	next := c
	next.NumTurns, next.Version = 3, c.Version+1
	mustNil(t, "AddTurn", s.Conversations.AddTurn(ctx(t), next, second, c.Version))
	checkConversation(t, "GetConversation", next, getConversation(t, s, c))
	checkWhole(t, "Turns", []voiceops.Turn{first, second}, turnsOf(t, s, c))
	list, err := s.Conversations.ListConversations(ctx(t), c.AccountID, c.ProjectID, at(-1), at(1), "", 10)
	mustNil(t, "ListConversations", err)
	checkWhole(t, "ListConversations", []voiceops.Conversation{next}, list)
	bySharedID, err := s.Conversations.ConversationBySharedID(ctx(t), c.AccountID, c.ProjectID, c.SharedID)
	mustNil(t, "ConversationBySharedID", err)
	checkConversation(t, "ConversationBySharedID", next, bySharedID)

	// A replacement with every field changed but the identity.
	end := at(300)
	u := voiceops.Conversation{
		ID: c.ID, AccountID: c.AccountID, ProjectID: c.ProjectID, Environment: voiceops.EnvSandbox, Channel: voiceops.ChannelWebchat,
		VariantID: "var_2", VariantName: "Other", FromNumber: "+441632960002", ToNumber: "+441632960998", ASRLang: "fr-FR", TTSLang: "fr-CA",
		IntegrationAttributes: map[string]any{"k": "v"}, State: map[string]any{"step": 9.0},
		StartedAt: c.StartedAt, EndedAt: &end, EndReason: voiceops.EndTimeout, InProgress: true, IdleDue: at(400),
		NumTurns: 7, NumSilences: 3, NumOOD: 2, ServiceTime: 3 * time.Second,
		Handoff: true, HandoffReason: "other", HandoffDestination: "queue-2", SharedID: "shared-43",
		Metrics: []voiceops.CustomMetric{{Name: "X", Value: "1"}}, ExpiresAt: retained().Add(time.Hour), Version: next.Version + 1,
	}
	checkEveryFieldSet(t, "updated conversation", u)
	mustNil(t, "UpdateConversation", s.Conversations.UpdateConversation(ctx(t), u, next.Version))
	checkConversation(t, "GetConversation after UpdateConversation", u, getConversation(t, s, c))
}

// testIdemWholeRecord reads an idempotency record back whole, in flight
// and done, with every field set.
func testIdemWholeRecord(t *testing.T, s idempotency.Store) {
	sc := idempotency.Scope{AccountID: "acct_a", KeyID: "key_1", Key: "order-\u00e9-42"}
	first := claim(sc, "fp1", "tok1", at(0))
	first.Response = idempotency.Response{Status: 201, ContentType: "application/json", Body: []byte(`{"id":"r"}`), RequestID: "req_1"}
	checkEveryFieldSet(t, "idempotency record", first)
	first.Response = idempotency.Response{} // Begin writes no response: Finish does
	checkWhole(t, "claimed record", first, mustBegin(t, s, first, at(0), true))
	checkWhole(t, "in-flight record", first, mustBegin(t, s, claim(sc, "fp2", "tok2", at(1)), at(1), false))

	resp := idempotency.Response{Status: 201, ContentType: "application/json", Body: []byte(`{"id":"r"}`), RequestID: "req_1"}
	mustNil(t, "Finish", s.Finish(ctx(t), sc, "tok1", resp))
	done := first
	done.State, done.Response = idempotency.Done, resp
	checkWhole(t, "done record", done, mustBegin(t, s, claim(sc, "fp2", "tok3", at(2)), at(2), false))
}
