package alerting_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/alerts/alerting"
	"github.com/voiceops/opsapi/shared/store/memory"
	"github.com/voiceops/opsapi/shared/voiceops"
)

var t0 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

// setup returns memory stores with an account and a project, a service
// over them, the scopes the stores woke ("account/project") and the
// service's clock.
func setup(t *testing.T) (voiceops.Stores, *alerting.Service, *[]string, *time.Time) {
	t.Helper()
	mem := memory.New()
	var woken []string
	mem.WakeWith(func(_ context.Context, accountID, projectID string, _ time.Time) error {
		woken = append(woken, accountID+"/"+projectID)
		return nil
	})
	stores := mem.Stores()
	ctx := context.Background()
	if err := stores.Accounts.CreateAccount(ctx, voiceops.Account{ID: "acct_a", CreatedAt: t0}); err != nil {
		t.Fatal(err)
	}
	if err := stores.Accounts.CreateProject(ctx, voiceops.Project{ID: "p1", AccountID: "acct_a", CreatedAt: t0}); err != nil {
		t.Fatal(err)
	}
	now := t0
	svc := &alerting.Service{Rules: stores.Rules, Now: func() time.Time { return now }, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	return stores, svc, &woken, &now
}

// TestRuleChangesWakeTheirScope: creating or changing an enabled rule
// writes it marked Wake, so the store wakes its scope; disabling one, or
// a patch that changes nothing, does not.
func TestRuleChangesWakeTheirScope(t *testing.T) {
	_, svc, woken, _ := setup(t)
	ctx := context.Background()
	p1 := "p1"
	r, err := svc.CreateRule(ctx, "acct_a", voiceops.RuleInput{Name: "r", ProjectID: &p1, Metric: voiceops.MetricAPIErrors, Operator: voiceops.OpGreater, Threshold: 1, Window: voiceops.Window5m}.Patch())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.CreateRule(ctx, "acct_a", voiceops.RuleInput{Name: "w", Metric: voiceops.MetricAPIErrors, Operator: voiceops.OpGreater, Threshold: 1, Window: voiceops.Window5m}.Patch()); err != nil {
		t.Fatal(err)
	}
	th := int64(7)
	if _, err := svc.PatchRule(ctx, "acct_a", r.ID, voiceops.RulePatch{Threshold: &th}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.PatchRule(ctx, "acct_a", r.ID, voiceops.RulePatch{Threshold: &th}); err != nil { // unchanged
		t.Fatal(err)
	}
	off := false
	if _, err := svc.PatchRule(ctx, "acct_a", r.ID, voiceops.RulePatch{Enabled: &off}); err != nil {
		t.Fatal(err)
	}
	if stored, _ := svc.Rules.GetRule(ctx, "acct_a", r.ID); stored.Wake {
		t.Error("the stored rule reads back marked Wake")
	}
	want := []string{"acct_a/p1", "acct_a/", "acct_a/p1"}
	if len(*woken) != len(want) {
		t.Fatalf("woken %v, want %v", *woken, want)
	}
	for i := range want {
		if (*woken)[i] != want[i] {
			t.Fatalf("woken %v, want %v", *woken, want)
		}
	}
}

// TestWithMarksShowsTheScopesMark: the reads of WithMarks show the scope's
// mark as last_evaluated_at of the enabled rules it covers, and leave
// disabled rules, rules created after it and other scopes alone.
func TestWithMarksShowsTheScopesMark(t *testing.T) {
	stores, svc, _, now := setup(t)
	ctx := context.Background()
	p1 := "p1"
	in := voiceops.RuleInput{Name: "r", ProjectID: &p1, Metric: voiceops.MetricAPIErrors, Operator: voiceops.OpGreater, Threshold: 1, Window: voiceops.Window5m}
	covered, _ := svc.CreateRule(ctx, "acct_a", in.Patch())
	disabled, _ := svc.CreateRule(ctx, "acct_a", in.Patch())
	off := false
	if _, err := svc.PatchRule(ctx, "acct_a", disabled.ID, voiceops.RulePatch{Enabled: &off}); err != nil {
		t.Fatal(err)
	}
	wide, _ := svc.CreateRule(ctx, "acct_a", voiceops.RuleInput{Name: "w", Metric: voiceops.MetricAPIErrors, Operator: voiceops.OpGreater, Threshold: 1, Window: voiceops.Window5m}.Patch())
	mark := t0.Add(30 * time.Second)
	if err := stores.Evaluations.MarkEvaluated(ctx, "acct_a", "p1", mark); err != nil {
		t.Fatal(err)
	}
	*now = t0.Add(time.Minute)
	later, _ := svc.CreateRule(ctx, "acct_a", in.Patch())

	api := alerting.WithMarks(stores.Rules, stores.Evaluations)
	want := map[string]*time.Time{covered.ID: &mark, disabled.ID: nil, wide.ID: nil, later.ID: nil}
	for id, w := range want {
		got, err := api.GetRule(ctx, "acct_a", id)
		if err != nil {
			t.Fatal(err)
		}
		if (w == nil) != (got.LastEvaluatedAt == nil) || (w != nil && !got.LastEvaluatedAt.Equal(*w)) {
			t.Errorf("GetRule %s: last_evaluated_at %v, want %v", id, got.LastEvaluatedAt, w)
		}
	}
	list, err := api.ListRules(ctx, "acct_a")
	if err != nil || len(list) != 4 {
		t.Fatalf("ListRules: %d %v", len(list), err)
	}
	for _, r := range list {
		w := want[r.ID]
		if (w == nil) != (r.LastEvaluatedAt == nil) || (w != nil && !r.LastEvaluatedAt.Equal(*w)) {
			t.Errorf("ListRules %s: last_evaluated_at %v, want %v", r.ID, r.LastEvaluatedAt, w)
		}
	}
	if raw, _ := stores.Rules.GetRule(ctx, "acct_a", covered.ID); raw.LastEvaluatedAt != nil {
		t.Errorf("the store itself changed: %v", raw.LastEvaluatedAt)
	}
	if alerting.WithMarks(stores.Rules, nil) != stores.Rules {
		t.Error("without marks the store is not returned as is")
	}
}

// TestDisablingOrDeletingAHeldBackRuleTellsWhatTheReceiversKnew: a rule
// whose alert a silence held back (the receivers never heard it fire)
// sends no alerts.resolved when disabled or deleted; one whose resolution
// was held back (they last heard it fire) sends it.
func TestDisablingOrDeletingAHeldBackRuleTellsWhatTheReceiversKnew(t *testing.T) {
	for _, c := range []struct {
		name         string
		state, heard voiceops.State
		resolved     bool
	}{
		{"fired under a silence", voiceops.StateAlert, voiceops.StateOK, false},
		{"resolved under a silence", voiceops.StateOK, voiceops.StateAlert, true},
		{"fired, told", voiceops.StateAlert, "", true},
	} {
		for _, remove := range []bool{false, true} {
			stores, svc, _, _ := setup(t)
			var sent []voiceops.EventType
			svc.Fanout = func(_ context.Context, e voiceops.AlertEvent) error { sent = append(sent, e.Type); return nil }
			ctx := context.Background()
			r, err := svc.CreateRule(ctx, "acct_a", voiceops.RuleInput{Name: "r", Metric: voiceops.MetricAPIErrors, Operator: voiceops.OpGreater, Threshold: 1, Window: voiceops.Window5m}.Patch())
			if err != nil {
				t.Fatal(err)
			}
			held := r
			held.State, held.SilencedFrom, held.Version = c.state, c.heard, r.Version+1
			if err := stores.Rules.UpdateRule(ctx, held, r.Version, false); err != nil {
				t.Fatal(err)
			}
			if remove {
				err = svc.DeleteRule(ctx, "acct_a", r.ID)
			} else {
				off := false
				var got voiceops.AlertRule
				got, err = svc.PatchRule(ctx, "acct_a", r.ID, voiceops.RulePatch{Enabled: &off})
				if got.SilencedFrom != "" {
					t.Errorf("%s: disabled, it still remembers %q", c.name, got.SilencedFrom)
				}
			}
			if err != nil {
				t.Fatal(err)
			}
			if want := c.resolved; (len(sent) == 1 && sent[0] == voiceops.EventResolved) != want || len(sent) > 1 {
				t.Errorf("%s (delete %v): sent %v, want alerts.resolved: %v", c.name, remove, sent, want)
			}
		}
	}
}

// listStarted is a rule store that tells when a ListRules has begun.
type listStarted struct {
	voiceops.RuleStore
	started chan struct{}
}

func (l listStarted) ListRules(ctx context.Context, accountID string) ([]voiceops.AlertRule, error) {
	close(l.started)
	return l.RuleStore.ListRules(ctx, accountID)
}

// marksAfterList is an evaluation store (not in process) whose Marks
// answers only once the rules' read has begun: it is the parallel read's.
type marksAfterList struct {
	voiceops.EvaluationStore
	started chan struct{}
}

func (m marksAfterList) Marks(ctx context.Context, accountID string) (map[string]time.Time, error) {
	select {
	case <-m.started:
		return m.EvaluationStore.Marks(ctx, accountID)
	case <-time.After(2 * time.Second):
		return nil, voiceops.Errorf(voiceops.KindInternal, "the marks were read before the rules, not with them")
	}
}

// TestWithMarksReadsInParallelUnlessInProcess: over a store with round
// trips the rules and the marks are read at once; the memory store says
// it makes none (alerting.InProcess), and its list shows the marks too
// (TestWithMarksShowsTheScopesMark).
func TestWithMarksReadsInParallelUnlessInProcess(t *testing.T) {
	stores, svc, _, _ := setup(t)
	ctx := context.Background()
	if _, err := svc.CreateRule(ctx, "acct_a", voiceops.RuleInput{Name: "w", Metric: voiceops.MetricAPIErrors, Operator: voiceops.OpGreater, Threshold: 1, Window: voiceops.Window5m}.Patch()); err != nil {
		t.Fatal(err)
	}
	started := make(chan struct{})
	api := alerting.WithMarks(listStarted{stores.Rules, started}, marksAfterList{stores.Evaluations, started})
	if list, err := api.ListRules(ctx, "acct_a"); err != nil || len(list) != 1 {
		t.Errorf("ListRules over a store with round trips: %d %v", len(list), err)
	}
	if local, ok := stores.Evaluations.(alerting.InProcess); !ok || !local.InProcess() {
		t.Errorf("the memory store does not tell it is in process")
	}
}

// countedEndpoints is an endpoint store that counts its GetEndpoint calls.
type countedEndpoints struct {
	voiceops.EndpointStore
	gets *int
}

func (c countedEndpoints) GetEndpoint(ctx context.Context, accountID, id string) (voiceops.WebhookEndpoint, error) {
	*c.gets++
	return c.EndpointStore.GetEndpoint(ctx, accountID, id)
}

// TestPatchReadEndpointReadsOnlyAfterAConflict: a patch of the endpoint
// the caller read writes without reading it again; when another write
// came in between (cur is stale), it reads the endpoint once more and
// applies the patch to what it finds, keeping the other write's change.
func TestPatchReadEndpointReadsOnlyAfterAConflict(t *testing.T) {
	stores, svc, _, now := setup(t)
	ctx := context.Background()
	gets := 0
	svc.Endpoints = countedEndpoints{stores.Endpoints, &gets}
	ep, err := svc.CreateEndpoint(ctx, "acct_a", "whsec_x", voiceops.EndpointInput{Name: "a", URL: "https://hooks.example.com/a", EventTypes: voiceops.EventTypes})
	if err != nil {
		t.Fatal(err)
	}
	name := "b"
	got, err := svc.PatchReadEndpoint(ctx, ep, voiceops.EndpointPatch{Name: &name})
	if err != nil || got.Name != "b" || got.Version != ep.Version+1 || gets != 0 {
		t.Fatalf("patch of a fresh read: %+v, %v, %d reads; want name b, version %d, no read", got, err, gets, ep.Version+1)
	}
	*now = now.Add(time.Second)
	u := "https://hooks.example.com/c"
	if _, err := svc.PatchEndpoint(ctx, "acct_a", ep.ID, voiceops.EndpointPatch{URL: &u}); err != nil {
		t.Fatal(err)
	}
	gets = 0
	name = "d"
	got, err = svc.PatchReadEndpoint(ctx, ep, voiceops.EndpointPatch{Name: &name}) // ep is two versions old
	if err != nil || got.Name != "d" || got.URL != u || got.Version != ep.Version+3 || gets != 1 {
		t.Errorf("patch of a stale read: %+v, %v, %d reads; want name d, url %s, version %d, one read", got, err, gets, u, ep.Version+3)
	}
	stored, err := stores.Endpoints.GetEndpoint(ctx, "acct_a", ep.ID)
	if err != nil || stored.Name != "d" || stored.URL != u {
		t.Errorf("stored %+v, %v", stored, err)
	}
}

// getStarted is a rule store that tells when a GetRule has begun.
type getStarted struct {
	voiceops.RuleStore
	started chan struct{}
}

func (g getStarted) GetRule(ctx context.Context, accountID, ruleID string) (voiceops.AlertRule, error) {
	close(g.started)
	return g.RuleStore.GetRule(ctx, accountID, ruleID)
}

// failingMarks is an evaluation store (not in process) whose reads fail.
type failingMarks struct{ voiceops.EvaluationStore }

func (failingMarks) Marks(context.Context, string) (map[string]time.Time, error) {
	return nil, voiceops.Errorf(voiceops.KindInternal, "marks unavailable")
}

// TestWithMarksGetRuleReadsInParallel: over a store with round trips, a
// rule and its account's marks are read at once, and the rule shows its
// scope's mark; a rule that is not the caller's is ErrNotFound whatever
// the marks read gives, and a disabled rule ignores them.
func TestWithMarksGetRuleReadsInParallel(t *testing.T) {
	stores, svc, _, _ := setup(t)
	ctx := context.Background()
	p1 := "p1"
	in := voiceops.RuleInput{Name: "r", ProjectID: &p1, Metric: voiceops.MetricAPIErrors, Operator: voiceops.OpGreater, Threshold: 1, Window: voiceops.Window5m}
	r, err := svc.CreateRule(ctx, "acct_a", in.Patch())
	if err != nil {
		t.Fatal(err)
	}
	off := false
	in.Name = "off"
	disabledIn := in.Patch()
	disabledIn.Enabled = &off
	disabled, err := svc.CreateRule(ctx, "acct_a", disabledIn)
	if err != nil {
		t.Fatal(err)
	}
	mark := t0.Add(30 * time.Second)
	if err := stores.Evaluations.MarkEvaluated(ctx, "acct_a", "p1", mark); err != nil {
		t.Fatal(err)
	}
	parallel := func() voiceops.RuleStore {
		started := make(chan struct{})
		return alerting.WithMarks(getStarted{stores.Rules, started}, marksAfterList{stores.Evaluations, started})
	}
	got, err := parallel().GetRule(ctx, "acct_a", r.ID)
	if err != nil || got.LastEvaluatedAt == nil || !got.LastEvaluatedAt.Equal(mark) {
		t.Errorf("GetRule: last_evaluated_at %v, %v; want the mark %v", got.LastEvaluatedAt, err, mark)
	}
	if _, err := parallel().GetRule(ctx, "acct_b", r.ID); !errors.Is(err, voiceops.ErrNotFound) {
		t.Errorf("GetRule of another account's rule: %v, want ErrNotFound", err)
	}
	broken := alerting.WithMarks(stores.Rules, failingMarks{stores.Evaluations})
	if _, err := broken.GetRule(ctx, "acct_b", r.ID); !errors.Is(err, voiceops.ErrNotFound) {
		t.Errorf("GetRule of another account's rule, marks failing: %v, want ErrNotFound", err)
	}
	if got, err := broken.GetRule(ctx, "acct_a", disabled.ID); err != nil || got.LastEvaluatedAt != nil {
		t.Errorf("GetRule of a disabled rule, marks failing: %v, %v; want the rule as stored", got.LastEvaluatedAt, err)
	}
	if _, err := broken.GetRule(ctx, "acct_a", r.ID); err == nil {
		t.Error("GetRule of an enabled rule, marks failing: want the marks' error, got none")
	}
}
