package evaluator

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/metrics"
	"github.com/voiceops/opsapi/shared/metrics/buckets"
	"github.com/voiceops/opsapi/shared/platform/tables"
	"github.com/voiceops/opsapi/shared/store/dynamo"
	"github.com/voiceops/opsapi/shared/store/dynamo/metricstore"
	"github.com/voiceops/opsapi/shared/testsupport/awstest"
	"github.com/voiceops/opsapi/shared/testsupport/capacity"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// TestSilenceReadCapacity measures on DynamoDB (moto) what silences cost
// the evaluator: a scheduled run, and a stream batch of several scopes per
// account, read each account's silences once (one Query: with silences
// exactly one call per account more than without, whatever its rules and
// scopes, none per rule), and that Query reads the
// silences not ended only, however many ended ones are kept. The units
// are computed from the items' sizes (shared/testsupport/capacity).
func TestSilenceReadCapacity(t *testing.T) {
	if !awstest.Available(t) {
		return
	}
	client := awstest.DynamoDB(t)
	names := awstest.Tables(t, client)
	rec := capacity.New(client, tables.PK, tables.SK)
	stores := dynamo.NewStores(rec, names)
	ms := metricstore.New(client, names.Metrics) // the metric reads are measured elsewhere
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Millisecond)
	const accounts, rulesPerAccount, inEffect, ended = 3, 8, 5, 40
	for a := range accounts {
		acct := fmt.Sprintf("acct_cap%d", a)
		must(t, stores.Accounts.CreateAccount(ctx, voiceops.Account{ID: acct, CreatedAt: now}))
		must(t, stores.Accounts.CreateProject(ctx, voiceops.Project{ID: "p1", AccountID: acct, CreatedAt: now}))
		p1 := "p1"
		for i := range rulesPerAccount {
			pid := &p1
			if i%2 == 0 {
				pid = nil
			}
			r := voiceops.NewRule(voiceops.NewID(voiceops.PrefixRule), acct, voiceops.RuleInput{Name: "r", ProjectID: pid,
				Metric: voiceops.MetricAPIErrors, Operator: voiceops.OpGreaterEqual, Threshold: int64(1 + i), Window: voiceops.Window5m}, now.Add(-time.Minute))
			must(t, stores.Rules.CreateRule(ctx, r))
		}
		must(t, (&buckets.Recorder{Store: ms}).Record(ctx, metrics.Event{AccountID: acct, ProjectID: "p1", Kind: metrics.APIErrors, Value: 3, At: now}))
	}
	sil := func(acct string, from, to time.Time) {
		must(t, stores.Silences.CreateSilence(ctx, voiceops.Silence{ID: voiceops.NewID(voiceops.PrefixSilence), AccountID: acct,
			Matchers: []voiceops.SilenceMatcher{{Name: voiceops.MatchMetric, Value: ptr("call_crashes")}},
			StartsAt: from, EndsAt: to, Comment: "load test of the carrier's trunk", CreatedAt: from}, now, nil))
	}
	for i := range ended {
		sil("acct_cap0", now.Add(-time.Duration(i+2)*time.Hour), now.Add(-time.Duration(i+1)*time.Hour))
	}
	for range inEffect {
		sil("acct_cap0", now.Add(-time.Hour), now.Add(time.Hour))
	}
	newEv := func(withSilences bool) *Evaluator {
		e := &Evaluator{Rules: stores.Rules, Events: stores.Events, Metrics: ms, Marks: stores.Evaluations,
			Fanout: func(context.Context, voiceops.AlertEvent) error { return nil },
			Now:    func() time.Time { return now.Add(time.Second) }, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
		if withSilences {
			e.Silences = stores.Silences
		}
		return e
	}
	// The first run writes the rules' states; the next two are the steady
	// state, with and without silences.
	if _, err := newEv(true).Run(ctx); err != nil {
		t.Fatal(err)
	}
	rec.Take()
	st, err := newEv(true).Run(ctx)
	must(t, err)
	with := rec.Take()
	_, err = newEv(false).Run(ctx)
	must(t, err)
	without := rec.Take()
	if st.Rules != accounts*rulesPerAccount || st.SilenceReads != accounts {
		t.Errorf("stats %+v: want %d rules, %d silence reads", st, accounts*rulesPerAccount, accounts)
	}
	if extra := with.Calls - without.Calls; extra != accounts {
		t.Errorf("the run with silences made %d calls more than without, want %d (one per account): %+v vs %+v", extra, accounts, with, without)
	}
	t.Logf("a scheduled run, %d accounts of %d rules: %d calls and %.1f RRU with silences, %d calls and %.1f RRU without",
		accounts, rulesPerAccount, with.Calls, with.RRU, without.Calls, without.RRU)

	// A stream batch holding both scopes of every account (the project's
	// and the account-wide one) reads each account's silences once too.
	var scopes []metrics.Scope
	for a := range accounts {
		acct := fmt.Sprintf("acct_cap%d", a)
		scopes = append(scopes, metrics.Scope{AccountID: acct, ProjectID: "p1"}, metrics.Scope{AccountID: acct})
	}
	rec.Take()
	st, err = newEv(true).EvaluateScopes(ctx, scopes)
	must(t, err)
	withStream := rec.Take()
	_, err = newEv(false).EvaluateScopes(ctx, scopes)
	must(t, err)
	withoutStream := rec.Take()
	if st.Rules != accounts*rulesPerAccount || st.SilenceReads != accounts {
		t.Errorf("stream batch stats %+v: want %d rules, %d silence reads", st, accounts*rulesPerAccount, accounts)
	}
	if extra := withStream.Calls - withoutStream.Calls; extra != accounts {
		t.Errorf("the stream batch with silences made %d calls more than without, want %d (one per account): %+v vs %+v", extra, accounts, withStream, withoutStream)
	}
	t.Logf("a stream batch of %d scopes: %d calls with silences, %d without", len(scopes), withStream.Calls, withoutStream.Calls)

	// The one read of an account with silences reads those not ended only.
	rec.Take()
	got, err := stores.Silences.ActiveSilences(ctx, "acct_cap0", now.Add(time.Second))
	must(t, err)
	read := rec.Take()
	if len(got) != inEffect || read.Calls != 1 || read.ItemsRead != inEffect || read.RRU > 1 {
		t.Errorf("ActiveSilences with %d in effect and %d ended: %d silences, %+v; want %d, 1 call reading %d items, at most 1 RRU", inEffect, ended, len(got), read, inEffect, inEffect)
	}
	t.Logf("ActiveSilences, %d in effect and %d ended kept: %d call, %d items, %.1f RRU", inEffect, ended, read.Calls, read.ItemsRead, read.RRU)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
