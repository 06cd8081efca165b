// Package storetest is the contract every implementation of the stores of
// shared/voiceops must pass: the in-memory one (shared/store/memory) and the
// DynamoDB one (shared/store/dynamo) run the same suite, so they cannot drift.
//
// Run calls newStores once per subtest; every call must return stores that
// hold no data at all, so subtests never see each other's records.
package storetest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/voiceops"
)

// Run runs the whole contract suite.
func Run(t *testing.T, newStores func(t *testing.T) voiceops.Stores) {
	t.Helper()
	t.Run("Accounts", func(t *testing.T) { testAccounts(t, newStores) })
	t.Run("Projects", func(t *testing.T) { testProjects(t, newStores) })
	t.Run("Keys", func(t *testing.T) { testKeys(t, newStores) })
	t.Run("Rules", func(t *testing.T) { testRules(t, newStores) })
	t.Run("RuleLimit", func(t *testing.T) { testRuleLimit(t, newStores) })
	t.Run("RuleUpdates", func(t *testing.T) { testRuleUpdates(t, newStores) })
	t.Run("Endpoints", func(t *testing.T) { testEndpoints(t, newStores) })
	t.Run("EndpointLimit", func(t *testing.T) { testEndpointLimit(t, newStores) })
	t.Run("EndpointUpdates", func(t *testing.T) { testEndpointUpdates(t, newStores) })
	t.Run("EndpointItemLimit", func(t *testing.T) { testEndpointItemLimit(t, newStores) })
	t.Run("TenantIsolation", func(t *testing.T) { testTenantIsolation(t, newStores) })
	t.Run("Concurrency", func(t *testing.T) { testConcurrency(t, newStores) })
	t.Run("EnabledRules", func(t *testing.T) { testEnabledRules(t, newStores) })
	t.Run("RuleEvents", func(t *testing.T) { testRuleEvents(t, newStores) })
	t.Run("EvaluationMarks", func(t *testing.T) { testEvaluationMarks(t, newStores) })
	t.Run("RuleHistory", func(t *testing.T) { testRuleHistory(t, newStores) })
	t.Run("Silences", func(t *testing.T) { testSilences(t, newStores) })
	t.Run("SilenceLimit", func(t *testing.T) { testSilenceLimit(t, newStores) })
	t.Run("SilenceCheck", func(t *testing.T) { testSilenceCheck(t, newStores) })
}

// concurrentCalls is how many goroutines race for the last place under a limit.
const concurrentCalls = 50 // CONTRIBUTING.md, testing notes: 50 concurrent creates at 9 rules, exactly one succeeds

// base is the time every fixture derives from. It has millisecond precision,
// like every time of the suite: stores must keep at least that.
var base = time.Date(2025, 3, 14, 9, 26, 53, 589_000_000, time.UTC)

// at returns base plus n seconds and a few milliseconds, in a zone other than
// UTC, so that stores are seen to keep the instant, not the wall clock.
func at(n int) time.Time {
	return base.Add(time.Duration(n)*time.Second + 7*time.Millisecond).In(time.FixedZone("UTC+2", 2*3600))
}

func ptr[T any](v T) *T { return &v }

func ctx(t *testing.T) context.Context { return t.Context() }

// --- fixtures ---------------------------------------------------------------

func mustAccount(t *testing.T, s voiceops.Stores) voiceops.Account {
	t.Helper()
	a := voiceops.Account{ID: voiceops.NewID(voiceops.PrefixAccount), Name: "Account " + voiceops.RandomBase62(4), CreatedAt: at(0)}
	if err := s.Accounts.CreateAccount(ctx(t), a); err != nil {
		t.Fatalf("CreateAccount: %v", err)
	}
	return a
}

func mustProject(t *testing.T, s voiceops.Stores, accountID string) voiceops.Project {
	t.Helper()
	p := voiceops.Project{ID: voiceops.NewID(voiceops.PrefixProject), AccountID: accountID, Name: "Project " + voiceops.RandomBase62(4), CreatedAt: at(1)}
	if err := s.Accounts.CreateProject(ctx(t), p); err != nil {
		t.Fatalf("CreateProject: %v", err)
	}
	return p
}

func newKey(accountID, projectID string, created time.Time) voiceops.Key {
	return voiceops.Key{
		ID: voiceops.NewID(voiceops.PrefixKey), Digest: voiceops.RandomBase62(64), Prefix: "vo_api_us_" + voiceops.RandomBase62(8),
		Kind: voiceops.KeyAPI, Region: voiceops.RegionUS, AccountID: accountID, ProjectID: projectID, CreatedAt: created,
	}
}

// newAgentKey returns an agent token bound to a project's environment.
func newAgentKey(accountID, projectID string, created time.Time) voiceops.Key {
	k := newKey(accountID, projectID, created)
	k.Kind, k.Environment = voiceops.KeyAgent, "sandbox"
	return k
}

// newRule returns a fresh enabled account-wide rule created at at(n).
func newRule(accountID string, n int) voiceops.AlertRule {
	return voiceops.AlertRule{
		ID: voiceops.NewID(voiceops.PrefixRule), AccountID: accountID, Name: fmt.Sprintf("rule %d", n),
		Metric: voiceops.MetricAPIErrors, Operator: voiceops.OpGreater, Threshold: int64(n), Window: voiceops.Window5m,
		Enabled: true, State: voiceops.StateOK, CreatedAt: at(n), UpdatedAt: at(n), Since: ptr(at(n)), Version: 1,
	}
}

func mustRule(t *testing.T, s voiceops.Stores, accountID string, n int) voiceops.AlertRule {
	t.Helper()
	r := newRule(accountID, n)
	if err := s.Rules.CreateRule(ctx(t), r); err != nil {
		t.Fatalf("CreateRule #%d: %v", n, err)
	}
	return r
}

// newEndpoint returns a fresh enabled endpoint created at at(n).
func newEndpoint(accountID string, n int) voiceops.WebhookEndpoint {
	return voiceops.WebhookEndpoint{
		ID: voiceops.NewID(voiceops.PrefixEndpoint), AccountID: accountID, Name: fmt.Sprintf("endpoint %d", n),
		Kind: voiceops.EndpointWebhook, URL: fmt.Sprintf("https://hooks.example.com/%d", n), EventTypes: []voiceops.EventType{voiceops.EventTriggered},
		Headers: map[string]string{}, TimeoutMS: voiceops.DefaultTimeoutMS, Enabled: true, CreatedAt: at(n), UpdatedAt: at(n),
		Secret: "whsec_" + voiceops.RandomBase62(43), Version: 1,
	}
}

func mustEndpoint(t *testing.T, s voiceops.Stores, accountID string, n int) voiceops.WebhookEndpoint {
	t.Helper()
	e := newEndpoint(accountID, n)
	if err := s.Endpoints.CreateEndpoint(ctx(t), e); err != nil {
		t.Fatalf("CreateEndpoint #%d: %v", n, err)
	}
	return e
}

// --- comparisons --------------------------------------------------------------

func checkAccount(t *testing.T, what string, want, got voiceops.Account) {
	t.Helper()
	checkWhole(t, what, want, got)
}

func checkProject(t *testing.T, what string, want, got voiceops.Project) {
	t.Helper()
	checkWhole(t, what, want, got)
}

func checkKey(t *testing.T, what string, want, got voiceops.Key) {
	t.Helper()
	checkWhole(t, what, want, got)
}

func checkRule(t *testing.T, what string, want, got voiceops.AlertRule) {
	t.Helper()
	checkWhole(t, what, want, got)
}

func checkEndpoint(t *testing.T, what string, want, got voiceops.WebhookEndpoint) {
	t.Helper()
	checkWhole(t, what, want, got)
}

// wantErr fails unless err is (or wraps) target and has target's kind.
func wantErr(t *testing.T, what string, err error, target *voiceops.Error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Errorf("%s: want error %q, got %v", what, target.Message, err)
		return
	}
	if k := voiceops.KindOf(err); k != target.Kind {
		t.Errorf("%s: want kind %d, got %d", what, target.Kind, k)
	}
}

func mustNil(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func ruleIDs(rs []voiceops.AlertRule) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.ID
	}
	return out
}

func endpointIDs(es []voiceops.WebhookEndpoint) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.ID
	}
	return out
}

func keyIDs(ks []voiceops.Key) []string {
	out := make([]string, len(ks))
	for i, k := range ks {
		out[i] = k.ID
	}
	return out
}

func listRules(t *testing.T, s voiceops.Stores, accountID string) []voiceops.AlertRule {
	t.Helper()
	rs, err := s.Rules.ListRules(ctx(t), accountID)
	mustNil(t, "ListRules", err)
	return rs
}

func listEndpoints(t *testing.T, s voiceops.Stores, accountID string) []voiceops.WebhookEndpoint {
	t.Helper()
	es, err := s.Endpoints.ListEndpoints(ctx(t), accountID)
	mustNil(t, "ListEndpoints", err)
	return es
}

// --- accounts and projects ---------------------------------------------------

func testAccounts(t *testing.T, newStores func(*testing.T) voiceops.Stores) {
	t.Run("create then get round-trips", func(t *testing.T) {
		s := newStores(t)
		a := voiceops.Account{ID: voiceops.NewID(voiceops.PrefixAccount), Name: "Ünïcode & Co", CreatedAt: at(3)}
		mustNil(t, "CreateAccount", s.Accounts.CreateAccount(ctx(t), a))
		got, err := s.Accounts.GetAccount(ctx(t), a.ID)
		mustNil(t, "GetAccount", err)
		checkAccount(t, "GetAccount", a, got)
	})
	t.Run("unknown account is not found", func(t *testing.T) {
		s := newStores(t)
		mustAccount(t, s)
		_, err := s.Accounts.GetAccount(ctx(t), "acct_missing")
		wantErr(t, "GetAccount", err, voiceops.ErrNotFound)
	})
	t.Run("duplicate account is refused and keeps the first", func(t *testing.T) {
		s := newStores(t)
		a := mustAccount(t, s)
		dup := a
		dup.Name = "impostor"
		wantErr(t, "CreateAccount twice", s.Accounts.CreateAccount(ctx(t), dup), voiceops.ErrAlreadyExists)
		got, err := s.Accounts.GetAccount(ctx(t), a.ID)
		mustNil(t, "GetAccount", err)
		checkAccount(t, "GetAccount after duplicate", a, got)
	})
	t.Run("list is empty, then every account ordered by ID", func(t *testing.T) {
		s := newStores(t)
		got, err := s.Accounts.ListAccounts(ctx(t))
		mustNil(t, "ListAccounts", err)
		if len(got) != 0 {
			t.Fatalf("ListAccounts on an empty store: want none, got %d", len(got))
		}
		var want []voiceops.Account
		for range 4 {
			want = append(want, mustAccount(t, s))
		}
		sort.Slice(want, func(i, j int) bool { return want[i].ID < want[j].ID })
		got, err = s.Accounts.ListAccounts(ctx(t))
		mustNil(t, "ListAccounts", err)
		if len(got) != len(want) {
			t.Fatalf("ListAccounts: want %d accounts, got %d", len(want), len(got))
		}
		for i := range want {
			checkAccount(t, fmt.Sprintf("ListAccounts[%d]", i), want[i], got[i])
		}
	})
}

func testProjects(t *testing.T, newStores func(*testing.T) voiceops.Stores) {
	t.Run("create then get round-trips", func(t *testing.T) {
		s := newStores(t)
		a := mustAccount(t, s)
		p := voiceops.Project{ID: voiceops.NewID(voiceops.PrefixProject), AccountID: a.ID, Name: "Support line", CreatedAt: at(5)}
		mustNil(t, "CreateProject", s.Accounts.CreateProject(ctx(t), p))
		got, err := s.Accounts.GetProject(ctx(t), a.ID, p.ID)
		mustNil(t, "GetProject", err)
		checkProject(t, "GetProject", p, got)
	})
	t.Run("errors", func(t *testing.T) {
		s := newStores(t)
		a := mustAccount(t, s)
		b := mustAccount(t, s)
		p := mustProject(t, s, a.ID)
		orphan := voiceops.Project{ID: voiceops.NewID(voiceops.PrefixProject), AccountID: "acct_missing", Name: "x", CreatedAt: at(1)}
		dup := p
		dup.Name = "impostor"
		for _, tc := range []struct {
			name string
			call func() error
			want *voiceops.Error
		}{
			{"create in a missing account", func() error { return s.Accounts.CreateProject(ctx(t), orphan) }, voiceops.ErrNotFound},
			{"create twice", func() error { return s.Accounts.CreateProject(ctx(t), dup) }, voiceops.ErrAlreadyExists},
			{"get unknown", func() error { _, err := s.Accounts.GetProject(ctx(t), a.ID, "proj_missing"); return err }, voiceops.ErrNotFound},
			{"get from another account", func() error { _, err := s.Accounts.GetProject(ctx(t), b.ID, p.ID); return err }, voiceops.ErrNotFound},
			{"get orphan after refusal", func() error { _, err := s.Accounts.GetProject(ctx(t), orphan.AccountID, orphan.ID); return err }, voiceops.ErrNotFound},
		} {
			t.Run(tc.name, func(t *testing.T) { wantErr(t, tc.name, tc.call(), tc.want) })
		}
		got, err := s.Accounts.GetProject(ctx(t), a.ID, p.ID)
		mustNil(t, "GetProject", err)
		checkProject(t, "GetProject after duplicate", p, got)
	})
	t.Run("list holds the account's projects ordered by ID", func(t *testing.T) {
		s := newStores(t)
		a := mustAccount(t, s)
		b := mustAccount(t, s)
		var want []voiceops.Project
		for range 3 {
			want = append(want, mustProject(t, s, a.ID))
		}
		mustProject(t, s, b.ID)
		sort.Slice(want, func(i, j int) bool { return want[i].ID < want[j].ID })
		got, err := s.Accounts.ListProjects(ctx(t), a.ID)
		mustNil(t, "ListProjects", err)
		if len(got) != len(want) {
			t.Fatalf("ListProjects: want %d projects, got %d", len(want), len(got))
		}
		for i := range want {
			checkProject(t, fmt.Sprintf("ListProjects[%d]", i), want[i], got[i])
		}
		none, err := s.Accounts.ListProjects(ctx(t), "acct_missing")
		mustNil(t, "ListProjects of a missing account", err)
		if len(none) != 0 {
			t.Errorf("ListProjects of a missing account: want none, got %d", len(none))
		}
	})
}

// --- keys -------------------------------------------------------------------

func testKeys(t *testing.T, newStores func(*testing.T) voiceops.Stores) {
	t.Run("create then find by digest round-trips", func(t *testing.T) {
		s := newStores(t)
		a := mustAccount(t, s)
		p := mustProject(t, s, a.ID)
		for _, tc := range []struct {
			name string
			key  voiceops.Key
		}{
			{"account-scoped api key", newKey(a.ID, "", at(10))},
			{"project-scoped agent key", func() voiceops.Key {
				k := newKey(a.ID, p.ID, at(11))
				k.Kind, k.Region = voiceops.KeyAgent, voiceops.RegionEU
				return k
			}()},
			{"agent token bound to an environment", newAgentKey(a.ID, p.ID, at(12))},
		} {
			t.Run(tc.name, func(t *testing.T) {
				mustNil(t, "CreateKey", s.Accounts.CreateKey(ctx(t), tc.key))
				got, err := s.Accounts.KeyByDigest(ctx(t), tc.key.Digest)
				mustNil(t, "KeyByDigest", err)
				checkKey(t, "KeyByDigest", tc.key, got)
			})
		}
	})
	t.Run("errors", func(t *testing.T) {
		s := newStores(t)
		a := mustAccount(t, s)
		b := mustAccount(t, s)
		pb := mustProject(t, s, b.ID)
		existing := newKey(a.ID, "", at(1))
		mustNil(t, "CreateKey", s.Accounts.CreateKey(ctx(t), existing))
		sameDigest := newKey(a.ID, "", at(2))
		sameDigest.Digest = existing.Digest
		for _, tc := range []struct {
			name string
			key  voiceops.Key
			want *voiceops.Error
		}{
			{"missing account", newKey("acct_missing", "", at(3)), voiceops.ErrNotFound},
			{"missing project", newKey(a.ID, "proj_missing", at(3)), voiceops.ErrNotFound},
			{"project of another account", newKey(a.ID, pb.ID, at(3)), voiceops.ErrNotFound},
			{"digest already stored", sameDigest, voiceops.ErrAlreadyExists},
		} {
			t.Run(tc.name, func(t *testing.T) {
				wantErr(t, "CreateKey", s.Accounts.CreateKey(ctx(t), tc.key), tc.want)
				if tc.want == voiceops.ErrAlreadyExists {
					return
				}
				_, err := s.Accounts.KeyByDigest(ctx(t), tc.key.Digest)
				wantErr(t, "KeyByDigest of the refused key", err, voiceops.ErrNotFound)
			})
		}
		got, err := s.Accounts.KeyByDigest(ctx(t), existing.Digest)
		mustNil(t, "KeyByDigest", err)
		checkKey(t, "KeyByDigest after a refused duplicate", existing, got)
		_, err = s.Accounts.KeyByDigest(ctx(t), "unknown-digest")
		wantErr(t, "KeyByDigest of an unknown digest", err, voiceops.ErrNotFound)
		keys, err := s.Accounts.ListKeys(ctx(t), a.ID)
		mustNil(t, "ListKeys", err)
		if !slices.Equal(keyIDs(keys), []string{existing.ID}) {
			t.Errorf("ListKeys after refusals: want [%s], got %v", existing.ID, keyIDs(keys))
		}
	})
	t.Run("list is ordered by creation time and scoped to the account", func(t *testing.T) {
		s := newStores(t)
		a := mustAccount(t, s)
		b := mustAccount(t, s)
		p := mustProject(t, s, a.ID)
		// Created out of order, with IDs chosen so that ID order is not time order.
		k3 := newKey(a.ID, "", at(30))
		k3.ID = "key_A"
		k1 := newKey(a.ID, p.ID, at(10))
		k1.ID = "key_C"
		k2 := newKey(a.ID, "", at(20))
		k2.ID = "key_B"
		other := newKey(b.ID, "", at(15))
		for _, k := range []voiceops.Key{k3, k1, other, k2} {
			mustNil(t, "CreateKey", s.Accounts.CreateKey(ctx(t), k))
		}
		got, err := s.Accounts.ListKeys(ctx(t), a.ID)
		mustNil(t, "ListKeys", err)
		want := []voiceops.Key{k1, k2, k3}
		if !slices.Equal(keyIDs(got), keyIDs(want)) {
			t.Fatalf("ListKeys: want %v, got %v", keyIDs(want), keyIDs(got))
		}
		for i := range want {
			checkKey(t, fmt.Sprintf("ListKeys[%d]", i), want[i], got[i])
		}
		none, err := s.Accounts.ListKeys(ctx(t), "acct_missing")
		mustNil(t, "ListKeys of a missing account", err)
		if len(none) != 0 {
			t.Errorf("ListKeys of a missing account: want none, got %d", len(none))
		}
	})
	t.Run("revoke sets the time once", func(t *testing.T) {
		s := newStores(t)
		a := mustAccount(t, s)
		k := newKey(a.ID, "", at(1))
		mustNil(t, "CreateKey", s.Accounts.CreateKey(ctx(t), k))
		first, second := at(100), at(200)

		got, err := s.Accounts.RevokeKey(ctx(t), a.ID, k.ID, first)
		mustNil(t, "RevokeKey", err)
		want := k
		want.RevokedAt = &first
		checkKey(t, "RevokeKey result", want, got)

		got, err = s.Accounts.RevokeKey(ctx(t), a.ID, k.ID, second)
		mustNil(t, "RevokeKey again", err)
		checkKey(t, "second RevokeKey result", want, got)

		got, err = s.Accounts.KeyByDigest(ctx(t), k.Digest)
		mustNil(t, "KeyByDigest", err)
		checkKey(t, "KeyByDigest after revoking", want, got)
		list, err := s.Accounts.ListKeys(ctx(t), a.ID)
		mustNil(t, "ListKeys", err)
		if len(list) != 1 {
			t.Fatalf("ListKeys: want 1 key, got %d", len(list))
		}
		checkKey(t, "ListKeys after revoking", want, list[0])

		// Values are copied out: changing a returned key changes nothing stored.
		*got.RevokedAt, *list[0].RevokedAt = at(300), at(300)
		got, err = s.Accounts.KeyByDigest(ctx(t), k.Digest)
		mustNil(t, "KeyByDigest", err)
		checkKey(t, "KeyByDigest after the caller changed a returned key", want, got)
	})
	t.Run("revoke of an unknown or foreign key is not found", func(t *testing.T) {
		s := newStores(t)
		a := mustAccount(t, s)
		b := mustAccount(t, s)
		k := newKey(a.ID, "", at(1))
		mustNil(t, "CreateKey", s.Accounts.CreateKey(ctx(t), k))
		_, err := s.Accounts.RevokeKey(ctx(t), a.ID, "key_missing", at(2))
		wantErr(t, "RevokeKey unknown", err, voiceops.ErrNotFound)
		_, err = s.Accounts.RevokeKey(ctx(t), b.ID, k.ID, at(2))
		wantErr(t, "RevokeKey from another account", err, voiceops.ErrNotFound)
		got, err := s.Accounts.KeyByDigest(ctx(t), k.Digest)
		mustNil(t, "KeyByDigest", err)
		checkKey(t, "key after refused revocations", k, got)
	})
}

// --- rules ------------------------------------------------------------------

func testRules(t *testing.T, newStores func(*testing.T) voiceops.Stores) {
	t.Run("every field round-trips", func(t *testing.T) {
		s := newStores(t)
		a := mustAccount(t, s)
		p := mustProject(t, s, a.ID)
		full := voiceops.AlertRule{
			ID: voiceops.NewID(voiceops.PrefixRule), AccountID: a.ID, Name: "p95 latency « high »", ProjectID: ptr(p.ID),
			Metric: voiceops.MetricTurnLatencyP95, Operator: voiceops.OpGreaterEqual, Threshold: voiceops.MaxThreshold,
			Window: voiceops.Window60m, Enabled: false, State: voiceops.StateAlert, CreatedAt: at(1), UpdatedAt: at(2),
			Since: ptr(at(3)), LastEvaluatedAt: ptr(at(4)), CurrentValue: ptr(int64(1234)), Version: 7,
		}
		fresh := newRule(a.ID, 5)
		fresh.Since, fresh.LastEvaluatedAt, fresh.CurrentValue = nil, nil, nil
		zero := newRule(a.ID, 6)
		zero.Threshold, zero.CurrentValue, zero.LastEvaluatedAt = 0, ptr(int64(0)), ptr(at(6))
		zero.Metric, zero.Operator, zero.Window, zero.State = voiceops.MetricCallVolume, voiceops.OpLessEqual, voiceops.Window10m, voiceops.StateNoData
		cases := []struct {
			name string
			rule voiceops.AlertRule
		}{
			{"project rule with every pointer set", full},
			{"account-wide rule with nil pointers", fresh},
			{"zero values kept apart from nil", zero},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				mustNil(t, "CreateRule", s.Rules.CreateRule(ctx(t), tc.rule))
				got, err := s.Rules.GetRule(ctx(t), a.ID, tc.rule.ID)
				mustNil(t, "GetRule", err)
				checkRule(t, "GetRule", tc.rule, got)
			})
		}
		list := listRules(t, s, a.ID)
		if len(list) != len(cases) {
			t.Fatalf("ListRules: want %d rules, got %d", len(cases), len(list))
		}
		for i, tc := range cases { // created at 1, 5, 6 seconds: list order is case order
			checkRule(t, fmt.Sprintf("ListRules[%d]", i), tc.rule, list[i])
		}
	})
	t.Run("values are copied in and out", func(t *testing.T) {
		s := newStores(t)
		a := mustAccount(t, s)
		p := mustProject(t, s, a.ID)
		r := newRule(a.ID, 1)
		r.ProjectID, r.CurrentValue = ptr(p.ID), ptr(int64(5))
		want := r
		want.ProjectID, want.Since, want.CurrentValue = ptr(*r.ProjectID), ptr(*r.Since), ptr(*r.CurrentValue)
		mustNil(t, "CreateRule", s.Rules.CreateRule(ctx(t), r))
		*r.ProjectID, *r.CurrentValue, *r.Since = "proj_changed", 99, at(99)
		got, err := s.Rules.GetRule(ctx(t), a.ID, r.ID)
		mustNil(t, "GetRule", err)
		checkRule(t, "GetRule after the caller changed its copy", want, got)
		*got.ProjectID, *got.CurrentValue = "proj_changed", 99
		again, err := s.Rules.GetRule(ctx(t), a.ID, r.ID)
		mustNil(t, "GetRule", err)
		checkRule(t, "GetRule after the caller changed a returned rule", want, again)
	})
	t.Run("list is ordered by creation time then ID", func(t *testing.T) {
		s := newStores(t)
		a := mustAccount(t, s)
		late := newRule(a.ID, 30)
		early := newRule(a.ID, 10)
		tieB := newRule(a.ID, 20)
		tieB.ID = "ar_tieB"
		tieA := newRule(a.ID, 20)
		tieA.ID = "ar_tieA"
		for _, r := range []voiceops.AlertRule{late, tieB, early, tieA} {
			mustNil(t, "CreateRule", s.Rules.CreateRule(ctx(t), r))
		}
		want := []string{early.ID, tieA.ID, tieB.ID, late.ID}
		if got := ruleIDs(listRules(t, s, a.ID)); !slices.Equal(got, want) {
			t.Errorf("ListRules order: want %v, got %v", want, got)
		}
	})
	t.Run("create errors", func(t *testing.T) {
		s := newStores(t)
		a := mustAccount(t, s)
		b := mustAccount(t, s)
		pb := mustProject(t, s, b.ID)
		existing := mustRule(t, s, a.ID, 1)
		unknownProject := newRule(a.ID, 2)
		unknownProject.ProjectID = ptr("proj_missing")
		foreignProject := newRule(a.ID, 3)
		foreignProject.ProjectID = ptr(pb.ID)
		dup := newRule(a.ID, 4)
		dup.ID = existing.ID
		for _, tc := range []struct {
			name string
			rule voiceops.AlertRule
			want *voiceops.Error
		}{
			{"missing account", newRule("acct_missing", 1), voiceops.ErrNotFound},
			{"unknown project", unknownProject, voiceops.ErrProjectNotFound},
			{"project of another account", foreignProject, voiceops.ErrProjectNotFound},
			{"rule ID already used", dup, voiceops.ErrAlreadyExists},
		} {
			t.Run(tc.name, func(t *testing.T) {
				wantErr(t, "CreateRule", s.Rules.CreateRule(ctx(t), tc.rule), tc.want)
			})
		}
		list := listRules(t, s, a.ID)
		if len(list) != 1 {
			t.Fatalf("ListRules after refusals: want 1 rule, got %d", len(list))
		}
		checkRule(t, "the existing rule after a refused duplicate", existing, list[0])
		none, err := s.Rules.ListRules(ctx(t), "acct_missing")
		mustNil(t, "ListRules of a missing account", err)
		if len(none) != 0 {
			t.Errorf("ListRules of a missing account: want none, got %d", len(none))
		}
	})
	t.Run("get and delete of unknown rules are not found", func(t *testing.T) {
		s := newStores(t)
		a := mustAccount(t, s)
		mustRule(t, s, a.ID, 1)
		_, err := s.Rules.GetRule(ctx(t), a.ID, "ar_missing")
		wantErr(t, "GetRule", err, voiceops.ErrNotFound)
		_, err = s.Rules.DeleteRule(ctx(t), a.ID, "ar_missing", nil)
		wantErr(t, "DeleteRule", err, voiceops.ErrNotFound)
		if n := len(listRules(t, s, a.ID)); n != 1 {
			t.Errorf("ListRules: want 1 rule, got %d", n)
		}
	})
	t.Run("delete returns the rule and removes it", func(t *testing.T) {
		s := newStores(t)
		a := mustAccount(t, s)
		keep := mustRule(t, s, a.ID, 1)
		gone := newRule(a.ID, 2)
		gone.LastEvaluatedAt, gone.CurrentValue, gone.State = ptr(at(3)), ptr(int64(42)), voiceops.StateAlert
		mustNil(t, "CreateRule", s.Rules.CreateRule(ctx(t), gone))
		got, err := s.Rules.DeleteRule(ctx(t), a.ID, gone.ID, nil)
		mustNil(t, "DeleteRule", err)
		checkRule(t, "DeleteRule result", gone, got)
		_, err = s.Rules.GetRule(ctx(t), a.ID, gone.ID)
		wantErr(t, "GetRule after delete", err, voiceops.ErrNotFound)
		_, err = s.Rules.DeleteRule(ctx(t), a.ID, gone.ID, nil)
		wantErr(t, "DeleteRule twice", err, voiceops.ErrNotFound)
		if got := ruleIDs(listRules(t, s, a.ID)); !slices.Equal(got, []string{keep.ID}) {
			t.Errorf("ListRules after delete: want [%s], got %v", keep.ID, got)
		}
	})
}

func testRuleLimit(t *testing.T, newStores func(*testing.T) voiceops.Stores) {
	s := newStores(t)
	a := mustAccount(t, s)
	b := mustAccount(t, s)
	// Refused creates must not take a place under the limit.
	bad := newRule(a.ID, 0)
	bad.ProjectID = ptr("proj_missing")
	err := s.Rules.CreateRule(ctx(t), bad)
	wantErr(t, "CreateRule with an unknown project", err, voiceops.ErrProjectNotFound)
	if k := voiceops.KindOf(err); k != voiceops.KindInvalid {
		t.Errorf("CreateRule with an unknown project: want KindInvalid (422), got kind %d", k)
	}
	var rules []voiceops.AlertRule
	for i := range voiceops.MaxRulesPerAccount {
		rules = append(rules, mustRule(t, s, a.ID, i+1))
	}
	dup := newRule(a.ID, 50)
	dup.ID = rules[0].ID
	err = s.Rules.CreateRule(ctx(t), dup)
	if err == nil {
		t.Fatal("CreateRule of a used ID at the limit succeeded")
	}
	if k := voiceops.KindOf(err); k != voiceops.KindConflict {
		t.Errorf("CreateRule of a used ID at the limit: want a conflict, got %v", err)
	}

	over := newRule(a.ID, 60)
	wantErr(t, "11th CreateRule", s.Rules.CreateRule(ctx(t), over), voiceops.ErrRuleLimit)
	if n := len(listRules(t, s, a.ID)); n != voiceops.MaxRulesPerAccount {
		t.Fatalf("ListRules at the limit: want %d, got %d", voiceops.MaxRulesPerAccount, n)
	}
	_, err = s.Rules.GetRule(ctx(t), a.ID, over.ID)
	wantErr(t, "GetRule of the refused rule", err, voiceops.ErrNotFound)

	// The limit is per account.
	mustRule(t, s, b.ID, 1)

	// Deleting frees exactly one place.
	_, err = s.Rules.DeleteRule(ctx(t), a.ID, rules[3].ID, nil)
	mustNil(t, "DeleteRule", err)
	mustNil(t, "CreateRule after a delete", s.Rules.CreateRule(ctx(t), over))
	wantErr(t, "CreateRule once full again", s.Rules.CreateRule(ctx(t), newRule(a.ID, 61)), voiceops.ErrRuleLimit)
	if n := len(listRules(t, s, a.ID)); n != voiceops.MaxRulesPerAccount {
		t.Errorf("ListRules: want %d, got %d", voiceops.MaxRulesPerAccount, n)
	}
}

func testRuleUpdates(t *testing.T, newStores func(*testing.T) voiceops.Stores) {
	s := newStores(t)
	a := mustAccount(t, s)
	p1 := mustProject(t, s, a.ID)
	p2 := mustProject(t, s, a.ID)

	// Each step starts from the stored rule, changes it, and either succeeds
	// (and the stored rule is then exactly the written one) or fails with
	// the given error (and the stored rule is unchanged).
	steps := []struct {
		name         string
		change       func(r *voiceops.AlertRule)
		expect       func(stored int64) int64 // the expected version passed
		checkProject bool
		want         *voiceops.Error
	}{
		{
			name: "every field changes",
			change: func(r *voiceops.AlertRule) {
				r.Name, r.ProjectID, r.Metric, r.Operator = "renamed", ptr(p1.ID), voiceops.MetricCallCrashes, voiceops.OpLess
				r.Threshold, r.Window, r.State, r.UpdatedAt = 99, voiceops.Window10m, voiceops.StateAlert, at(50)
				r.Since, r.LastEvaluatedAt, r.CurrentValue = ptr(at(49)), ptr(at(48)), ptr(int64(100))
			},
			checkProject: true,
		},
		{
			name: "pointers become nil and the rule is disabled",
			change: func(r *voiceops.AlertRule) {
				r.ProjectID, r.Since, r.LastEvaluatedAt, r.CurrentValue, r.Enabled = nil, nil, nil, nil, false
			},
		},
		{
			name:   "enabled again",
			change: func(r *voiceops.AlertRule) { r.Enabled, r.State = true, voiceops.StateUnknown },
		},
		{
			name:   "stale version",
			change: func(r *voiceops.AlertRule) { r.Name = "stale" },
			expect: func(v int64) int64 { return v - 1 },
			want:   voiceops.ErrConflictingWrite,
		},
		{
			name:   "future version",
			change: func(r *voiceops.AlertRule) { r.Name = "future" },
			expect: func(v int64) int64 { return v + 1 },
			want:   voiceops.ErrConflictingWrite,
		},
		{
			name:         "checked move to an unknown project",
			change:       func(r *voiceops.AlertRule) { r.ProjectID, r.Name = ptr("proj_missing"), "moved" },
			checkProject: true,
			want:         voiceops.ErrProjectNotFound,
		},
		{
			name:         "checked move to another existing project",
			change:       func(r *voiceops.AlertRule) { r.ProjectID = ptr(p2.ID) },
			checkProject: true,
		},
		{
			name:         "checked move to account-wide",
			change:       func(r *voiceops.AlertRule) { r.ProjectID = nil },
			checkProject: true,
		},
	}
	r := mustRule(t, s, a.ID, 1)
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			before, err := s.Rules.GetRule(ctx(t), a.ID, r.ID)
			mustNil(t, "GetRule", err)
			next := before
			st.change(&next)
			next.Version = before.Version + 1
			expect := before.Version
			if st.expect != nil {
				expect = st.expect(before.Version)
			}
			err = s.Rules.UpdateRule(ctx(t), next, expect, st.checkProject)
			after, gerr := s.Rules.GetRule(ctx(t), a.ID, r.ID)
			mustNil(t, "GetRule after UpdateRule", gerr)
			if st.want != nil {
				wantErr(t, "UpdateRule", err, st.want)
				checkRule(t, "rule after a refused update", before, after)
				return
			}
			mustNil(t, "UpdateRule", err)
			checkRule(t, "rule after UpdateRule", next, after)
		})
	}

	t.Run("unknown rule", func(t *testing.T) {
		missing := newRule(a.ID, 2)
		missing.Version = 2
		wantErr(t, "UpdateRule", s.Rules.UpdateRule(ctx(t), missing, 1, false), voiceops.ErrNotFound)
		wantErr(t, "UpdateRule with checkProject", s.Rules.UpdateRule(ctx(t), missing, 1, true), voiceops.ErrNotFound)
		_, err := s.Rules.GetRule(ctx(t), a.ID, missing.ID)
		wantErr(t, "GetRule after refused update", err, voiceops.ErrNotFound)
		if n := len(listRules(t, s, a.ID)); n != 1 {
			t.Errorf("ListRules: want 1 rule, got %d", n)
		}
	})
}

// --- endpoints ----------------------------------------------------------------

func testEndpoints(t *testing.T, newStores func(*testing.T) voiceops.Stores) {
	t.Run("every field round-trips", func(t *testing.T) {
		s := newStores(t)
		a := mustAccount(t, s)
		full := voiceops.WebhookEndpoint{
			ID: voiceops.NewID(voiceops.PrefixEndpoint), AccountID: a.ID, Name: "PagerDuty – prod", Kind: voiceops.EndpointWebhook, URL: "https://events.example.com/hook?x=1&y=%20",
			EventTypes: []voiceops.EventType{voiceops.EventResolved, voiceops.EventTriggered},
			Headers:    map[string]string{"Authorization": "Bearer abc.def", "X-Team": "ops", "X-Empty": "", "x-lower.case_~": "v=1; w=2"},
			TimeoutMS:  voiceops.MaxTimeoutMS, Enabled: false, CreatedAt: at(1), UpdatedAt: at(2),
			Secret: "whsec_" + voiceops.RandomBase62(43), PreviousSecret: "whsec_" + voiceops.RandomBase62(43),
			PreviousExpiresAt: ptr(at(3)), Version: 4,
		}
		plain := newEndpoint(a.ID, 5)
		slack := newEndpoint(a.ID, 6)
		slack.Kind, slack.URL = voiceops.EndpointSlack, "https://hooks.slack.com/services/T000/B000/XXXX"
		pagerduty := newEndpoint(a.ID, 7)
		pagerduty.Kind, pagerduty.URL, pagerduty.RoutingKey = voiceops.EndpointPagerDuty, voiceops.PagerDutyEventsURL, "R0123456789abcdefABCDEF012345678"
		cases := []struct {
			name string
			e    voiceops.WebhookEndpoint
		}{
			{"endpoint with headers and a previous secret", full},
			{"endpoint without headers or previous secret", plain},
			{"slack endpoint", slack},
			{"pagerduty endpoint with its routing key", pagerduty},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				mustNil(t, "CreateEndpoint", s.Endpoints.CreateEndpoint(ctx(t), tc.e))
				got, err := s.Endpoints.GetEndpoint(ctx(t), a.ID, tc.e.ID)
				mustNil(t, "GetEndpoint", err)
				checkEndpoint(t, "GetEndpoint", tc.e, got)
			})
		}
		list := listEndpoints(t, s, a.ID)
		if len(list) != len(cases) {
			t.Fatalf("ListEndpoints: want %d endpoints, got %d", len(cases), len(list))
		}
		for i, tc := range cases {
			checkEndpoint(t, fmt.Sprintf("ListEndpoints[%d]", i), tc.e, list[i])
		}
	})
	t.Run("values are copied in and out", func(t *testing.T) {
		s := newStores(t)
		a := mustAccount(t, s)
		e := newEndpoint(a.ID, 1)
		e.Headers = map[string]string{"X-A": "1"}
		e.EventTypes = []voiceops.EventType{voiceops.EventTriggered, voiceops.EventResolved}
		e.PreviousExpiresAt = ptr(at(5))
		want := e
		want.Headers = maps.Clone(e.Headers)
		want.EventTypes = slices.Clone(e.EventTypes)
		want.PreviousExpiresAt = ptr(*e.PreviousExpiresAt)
		mustNil(t, "CreateEndpoint", s.Endpoints.CreateEndpoint(ctx(t), e))
		e.Headers["X-B"] = "2"
		e.EventTypes[0] = "changed"
		*e.PreviousExpiresAt = at(99)
		got, err := s.Endpoints.GetEndpoint(ctx(t), a.ID, e.ID)
		mustNil(t, "GetEndpoint", err)
		checkEndpoint(t, "GetEndpoint after the caller changed its copy", want, got)
		got.Headers["X-C"] = "3"
		got.EventTypes[1] = "changed"
		again, err := s.Endpoints.GetEndpoint(ctx(t), a.ID, e.ID)
		mustNil(t, "GetEndpoint", err)
		checkEndpoint(t, "GetEndpoint after the caller changed a returned endpoint", want, again)
	})
	t.Run("list is ordered by creation time then ID", func(t *testing.T) {
		s := newStores(t)
		a := mustAccount(t, s)
		late := newEndpoint(a.ID, 30)
		early := newEndpoint(a.ID, 10)
		tieB := newEndpoint(a.ID, 20)
		tieB.ID = "whe_tieB"
		tieA := newEndpoint(a.ID, 20)
		tieA.ID = "whe_tieA"
		for _, e := range []voiceops.WebhookEndpoint{late, tieB, early, tieA} {
			mustNil(t, "CreateEndpoint", s.Endpoints.CreateEndpoint(ctx(t), e))
		}
		want := []string{early.ID, tieA.ID, tieB.ID, late.ID}
		if got := endpointIDs(listEndpoints(t, s, a.ID)); !slices.Equal(got, want) {
			t.Errorf("ListEndpoints order: want %v, got %v", want, got)
		}
	})
	t.Run("errors", func(t *testing.T) {
		s := newStores(t)
		a := mustAccount(t, s)
		existing := mustEndpoint(t, s, a.ID, 1)
		dup := newEndpoint(a.ID, 2)
		dup.ID = existing.ID
		wantErr(t, "CreateEndpoint in a missing account", s.Endpoints.CreateEndpoint(ctx(t), newEndpoint("acct_missing", 1)), voiceops.ErrNotFound)
		wantErr(t, "CreateEndpoint with a used ID", s.Endpoints.CreateEndpoint(ctx(t), dup), voiceops.ErrAlreadyExists)
		_, err := s.Endpoints.GetEndpoint(ctx(t), a.ID, "whe_missing")
		wantErr(t, "GetEndpoint unknown", err, voiceops.ErrNotFound)
		wantErr(t, "DeleteEndpoint unknown", s.Endpoints.DeleteEndpoint(ctx(t), a.ID, "whe_missing"), voiceops.ErrNotFound)
		list := listEndpoints(t, s, a.ID)
		if len(list) != 1 {
			t.Fatalf("ListEndpoints after refusals: want 1, got %d", len(list))
		}
		checkEndpoint(t, "the existing endpoint after a refused duplicate", existing, list[0])
		none, err := s.Endpoints.ListEndpoints(ctx(t), "acct_missing")
		mustNil(t, "ListEndpoints of a missing account", err)
		if len(none) != 0 {
			t.Errorf("ListEndpoints of a missing account: want none, got %d", len(none))
		}
	})
	t.Run("delete removes it", func(t *testing.T) {
		s := newStores(t)
		a := mustAccount(t, s)
		keep := mustEndpoint(t, s, a.ID, 1)
		gone := mustEndpoint(t, s, a.ID, 2)
		mustNil(t, "DeleteEndpoint", s.Endpoints.DeleteEndpoint(ctx(t), a.ID, gone.ID))
		_, err := s.Endpoints.GetEndpoint(ctx(t), a.ID, gone.ID)
		wantErr(t, "GetEndpoint after delete", err, voiceops.ErrNotFound)
		wantErr(t, "DeleteEndpoint twice", s.Endpoints.DeleteEndpoint(ctx(t), a.ID, gone.ID), voiceops.ErrNotFound)
		if got := endpointIDs(listEndpoints(t, s, a.ID)); !slices.Equal(got, []string{keep.ID}) {
			t.Errorf("ListEndpoints after delete: want [%s], got %v", keep.ID, got)
		}
	})
}

func testEndpointLimit(t *testing.T, newStores func(*testing.T) voiceops.Stores) {
	s := newStores(t)
	a := mustAccount(t, s)
	b := mustAccount(t, s)
	var eps []voiceops.WebhookEndpoint
	for i := range voiceops.MaxEndpointsPerAccount {
		eps = append(eps, mustEndpoint(t, s, a.ID, i+1))
	}
	over := newEndpoint(a.ID, 60)
	wantErr(t, "11th CreateEndpoint", s.Endpoints.CreateEndpoint(ctx(t), over), voiceops.ErrEndpointLimit)
	if n := len(listEndpoints(t, s, a.ID)); n != voiceops.MaxEndpointsPerAccount {
		t.Fatalf("ListEndpoints at the limit: want %d, got %d", voiceops.MaxEndpointsPerAccount, n)
	}
	_, err := s.Endpoints.GetEndpoint(ctx(t), a.ID, over.ID)
	wantErr(t, "GetEndpoint of the refused endpoint", err, voiceops.ErrNotFound)

	mustEndpoint(t, s, b.ID, 1)

	mustNil(t, "DeleteEndpoint", s.Endpoints.DeleteEndpoint(ctx(t), a.ID, eps[5].ID))
	mustNil(t, "CreateEndpoint after a delete", s.Endpoints.CreateEndpoint(ctx(t), over))
	wantErr(t, "CreateEndpoint once full again", s.Endpoints.CreateEndpoint(ctx(t), newEndpoint(a.ID, 61)), voiceops.ErrEndpointLimit)
	if n := len(listEndpoints(t, s, a.ID)); n != voiceops.MaxEndpointsPerAccount {
		t.Errorf("ListEndpoints: want %d, got %d", voiceops.MaxEndpointsPerAccount, n)
	}
}

func testEndpointUpdates(t *testing.T, newStores func(*testing.T) voiceops.Stores) {
	s := newStores(t)
	a := mustAccount(t, s)
	e := mustEndpoint(t, s, a.ID, 1)
	steps := []struct {
		name   string
		change func(e *voiceops.WebhookEndpoint)
		expect func(stored int64) int64
		want   *voiceops.Error
	}{
		{
			name: "every field changes",
			change: func(e *voiceops.WebhookEndpoint) {
				e.Name, e.URL, e.TimeoutMS, e.Enabled, e.UpdatedAt = "renamed", "https://other.example.com/h", 1500, false, at(40)
				e.EventTypes = []voiceops.EventType{voiceops.EventResolved}
				e.Headers = map[string]string{"Authorization": "Basic Zm9v"}
			},
		},
		{
			name: "secret rotated with an overlap",
			change: func(e *voiceops.WebhookEndpoint) {
				e.PreviousSecret, e.Secret, e.PreviousExpiresAt = e.Secret, "whsec_rotated", ptr(at(41))
			},
		},
		{
			name: "overlap ended and headers emptied",
			change: func(e *voiceops.WebhookEndpoint) {
				e.PreviousSecret, e.PreviousExpiresAt, e.Headers, e.Enabled = "", nil, map[string]string{}, true
			},
		},
		{
			name:   "stale version",
			change: func(e *voiceops.WebhookEndpoint) { e.Name = "stale" },
			expect: func(v int64) int64 { return v - 1 },
			want:   voiceops.ErrConflictingWrite,
		},
		{
			name:   "future version",
			change: func(e *voiceops.WebhookEndpoint) { e.Name = "future" },
			expect: func(v int64) int64 { return v + 1 },
			want:   voiceops.ErrConflictingWrite,
		},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			before, err := s.Endpoints.GetEndpoint(ctx(t), a.ID, e.ID)
			mustNil(t, "GetEndpoint", err)
			next := before
			next.Headers = maps.Clone(before.Headers)
			next.EventTypes = slices.Clone(before.EventTypes)
			st.change(&next)
			next.Version = before.Version + 1
			expect := before.Version
			if st.expect != nil {
				expect = st.expect(before.Version)
			}
			err = s.Endpoints.UpdateEndpoint(ctx(t), next, expect)
			after, gerr := s.Endpoints.GetEndpoint(ctx(t), a.ID, e.ID)
			mustNil(t, "GetEndpoint after UpdateEndpoint", gerr)
			if st.want != nil {
				wantErr(t, "UpdateEndpoint", err, st.want)
				checkEndpoint(t, "endpoint after a refused update", before, after)
				return
			}
			mustNil(t, "UpdateEndpoint", err)
			checkEndpoint(t, "endpoint after UpdateEndpoint", next, after)
		})
	}
	t.Run("unknown endpoint", func(t *testing.T) {
		missing := newEndpoint(a.ID, 2)
		missing.Version = 2
		wantErr(t, "UpdateEndpoint", s.Endpoints.UpdateEndpoint(ctx(t), missing, 1), voiceops.ErrNotFound)
		_, err := s.Endpoints.GetEndpoint(ctx(t), a.ID, missing.ID)
		wantErr(t, "GetEndpoint after refused update", err, voiceops.ErrNotFound)
	})
}

// --- tenants --------------------------------------------------------------------

func testTenantIsolation(t *testing.T, newStores func(*testing.T) voiceops.Stores) {
	s := newStores(t)
	a := mustAccount(t, s)
	b := mustAccount(t, s)
	r := mustRule(t, s, a.ID, 1)
	e := mustEndpoint(t, s, a.ID, 1)

	hijackRule := r
	hijackRule.AccountID, hijackRule.Name, hijackRule.Version = b.ID, "hijacked", 2
	hijackEndpoint := e
	hijackEndpoint.AccountID, hijackEndpoint.URL, hijackEndpoint.Version = b.ID, "https://evil.example.com/", 2

	for _, tc := range []struct {
		name string
		call func() error
	}{
		{"GetRule", func() error { _, err := s.Rules.GetRule(ctx(t), b.ID, r.ID); return err }},
		{"UpdateRule", func() error { return s.Rules.UpdateRule(ctx(t), hijackRule, 1, false) }},
		{"UpdateRule with checkProject", func() error { return s.Rules.UpdateRule(ctx(t), hijackRule, 1, true) }},
		{"DeleteRule", func() error { _, err := s.Rules.DeleteRule(ctx(t), b.ID, r.ID, nil); return err }},
		{"GetEndpoint", func() error { _, err := s.Endpoints.GetEndpoint(ctx(t), b.ID, e.ID); return err }},
		{"UpdateEndpoint", func() error { return s.Endpoints.UpdateEndpoint(ctx(t), hijackEndpoint, 1) }},
		{"DeleteEndpoint", func() error { return s.Endpoints.DeleteEndpoint(ctx(t), b.ID, e.ID) }},
	} {
		t.Run(tc.name+" from another account", func(t *testing.T) {
			wantErr(t, tc.name, tc.call(), voiceops.ErrNotFound)
		})
	}
	t.Run("lists of the other account are empty", func(t *testing.T) {
		if n := len(listRules(t, s, b.ID)); n != 0 {
			t.Errorf("ListRules of account B: want none, got %d", n)
		}
		if n := len(listEndpoints(t, s, b.ID)); n != 0 {
			t.Errorf("ListEndpoints of account B: want none, got %d", n)
		}
	})
	t.Run("account A's records are untouched", func(t *testing.T) {
		gotR, err := s.Rules.GetRule(ctx(t), a.ID, r.ID)
		mustNil(t, "GetRule", err)
		checkRule(t, "account A's rule", r, gotR)
		gotE, err := s.Endpoints.GetEndpoint(ctx(t), a.ID, e.ID)
		mustNil(t, "GetEndpoint", err)
		checkEndpoint(t, "account A's endpoint", e, gotE)
	})
	t.Run("account B's quota is its own", func(t *testing.T) {
		for i := range voiceops.MaxRulesPerAccount {
			mustRule(t, s, b.ID, i+10)
		}
		if n := len(listRules(t, s, a.ID)); n != 1 {
			t.Errorf("ListRules of account A: want 1, got %d", n)
		}
	})
}

// --- concurrency --------------------------------------------------------------

// race runs n calls at once and returns their errors.
func race(n int, call func(i int) error) []error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			errs[i] = call(i)
		}()
	}
	close(start)
	wg.Wait()
	return errs
}

// exactlyOne checks that one call succeeded and every other failed with loser.
func exactlyOne(t *testing.T, what string, errs []error, loser *voiceops.Error) int {
	t.Helper()
	winner, wins := -1, 0
	for i, err := range errs {
		switch {
		case err == nil:
			winner = i
			wins++
		case errors.Is(err, loser):
		default:
			t.Errorf("%s #%d: want nil or %q, got %v", what, i, loser.Message, err)
		}
	}
	if wins != 1 {
		t.Fatalf("%s: %d of %d concurrent calls succeeded, want exactly 1", what, wins, len(errs))
	}
	return winner
}

func testConcurrency(t *testing.T, newStores func(*testing.T) voiceops.Stores) {
	t.Run("one of many creates takes the last rule place", func(t *testing.T) {
		s := newStores(t)
		a := mustAccount(t, s)
		for i := range voiceops.MaxRulesPerAccount - 1 {
			mustRule(t, s, a.ID, i)
		}
		candidates := make([]voiceops.AlertRule, concurrentCalls)
		for i := range candidates {
			candidates[i] = newRule(a.ID, 100+i)
		}
		errs := race(concurrentCalls, func(i int) error { return s.Rules.CreateRule(ctx(t), candidates[i]) })
		winner := exactlyOne(t, "CreateRule", errs, voiceops.ErrRuleLimit)
		list := listRules(t, s, a.ID)
		if len(list) != voiceops.MaxRulesPerAccount {
			t.Fatalf("ListRules: want %d, got %d", voiceops.MaxRulesPerAccount, len(list))
		}
		if !slices.Contains(ruleIDs(list), candidates[winner].ID) {
			t.Errorf("ListRules lacks the winning rule %s", candidates[winner].ID)
		}
	})
	t.Run("one of many creates takes the last endpoint place", func(t *testing.T) {
		s := newStores(t)
		a := mustAccount(t, s)
		for i := range voiceops.MaxEndpointsPerAccount - 1 {
			mustEndpoint(t, s, a.ID, i)
		}
		candidates := make([]voiceops.WebhookEndpoint, concurrentCalls)
		for i := range candidates {
			candidates[i] = newEndpoint(a.ID, 100+i)
		}
		errs := race(concurrentCalls, func(i int) error { return s.Endpoints.CreateEndpoint(ctx(t), candidates[i]) })
		winner := exactlyOne(t, "CreateEndpoint", errs, voiceops.ErrEndpointLimit)
		list := listEndpoints(t, s, a.ID)
		if len(list) != voiceops.MaxEndpointsPerAccount {
			t.Fatalf("ListEndpoints: want %d, got %d", voiceops.MaxEndpointsPerAccount, len(list))
		}
		if !slices.Contains(endpointIDs(list), candidates[winner].ID) {
			t.Errorf("ListEndpoints lacks the winning endpoint %s", candidates[winner].ID)
		}
	})
	t.Run("one of many updates at the same version wins", func(t *testing.T) {
		s := newStores(t)
		a := mustAccount(t, s)
		r := mustRule(t, s, a.ID, 1)
		const n = 10
		errs := race(n, func(i int) error {
			next := r
			next.Name, next.Threshold, next.Version = fmt.Sprintf("writer %d", i), int64(i), r.Version+1
			return s.Rules.UpdateRule(ctx(t), next, r.Version, false)
		})
		winner := exactlyOne(t, "UpdateRule", errs, voiceops.ErrConflictingWrite)
		got, err := s.Rules.GetRule(ctx(t), a.ID, r.ID)
		mustNil(t, "GetRule", err)
		want := r
		want.Name, want.Threshold, want.Version = fmt.Sprintf("writer %d", winner), int64(winner), r.Version+1
		checkRule(t, "rule after the race", want, got)
	})
	t.Run("one of many endpoint updates at the same version wins", func(t *testing.T) {
		s := newStores(t)
		a := mustAccount(t, s)
		e := mustEndpoint(t, s, a.ID, 1)
		const n = 10
		errs := race(n, func(i int) error {
			next := e
			next.Name, next.Version = fmt.Sprintf("writer %d", i), e.Version+1
			return s.Endpoints.UpdateEndpoint(ctx(t), next, e.Version)
		})
		winner := exactlyOne(t, "UpdateEndpoint", errs, voiceops.ErrConflictingWrite)
		got, err := s.Endpoints.GetEndpoint(ctx(t), a.ID, e.ID)
		mustNil(t, "GetEndpoint", err)
		want := e
		want.Name, want.Version = fmt.Sprintf("writer %d", winner), e.Version+1
		checkEndpoint(t, "endpoint after the race", want, got)
	})
}
