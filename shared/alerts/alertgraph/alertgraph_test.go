package alertgraph

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/store/memory"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// TestGraphWakesAndMarks: a rule the graph's service creates is written
// marked Wake, so the store touches its scope at the graph's clock, and
// the graph's reads show the evaluator's later mark.
func TestGraphWakesAndMarks(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	mem := memory.New()
	type touch struct {
		account, project string
		at               time.Time
	}
	var touched []touch
	mem.WakeWith(func(_ context.Context, a, p string, at time.Time) error {
		touched = append(touched, touch{a, p, at})
		return nil
	})
	stores := mem.Stores()
	if err := stores.Accounts.CreateAccount(ctx, voiceops.Account{ID: "acct_1", CreatedAt: t0}); err != nil {
		t.Fatal(err)
	}
	if err := stores.Accounts.CreateProject(ctx, voiceops.Project{ID: "proj_1", AccountID: "acct_1", CreatedAt: t0}); err != nil {
		t.Fatal(err)
	}
	g := New(Deps{Rules: stores.Rules, Endpoints: stores.Endpoints, Marks: stores.Evaluations,
		Now: func() time.Time { return t0 }, Log: slog.New(slog.DiscardHandler)})
	proj := "proj_1"
	r, err := g.Service.CreateRule(ctx, "acct_1", voiceops.RuleInput{Name: "n", ProjectID: &proj, Metric: voiceops.MetricAPIErrors,
		Operator: voiceops.OpGreater, Threshold: 1, Window: voiceops.Window5m}.Patch())
	if err != nil {
		t.Fatal(err)
	}
	if len(touched) != 1 || touched[0] != (touch{"acct_1", "proj_1", t0}) {
		t.Errorf("touched %v, want acct_1/proj_1 at %v", touched, t0)
	}
	mark := t0.Add(30 * time.Second)
	if err := stores.Evaluations.MarkEvaluated(ctx, "acct_1", "proj_1", mark); err != nil {
		t.Fatal(err)
	}
	got, err := g.Rules.GetRule(ctx, "acct_1", r.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.LastEvaluatedAt == nil || !got.LastEvaluatedAt.Equal(mark) {
		t.Errorf("read rule evaluated at %v, want the mark %v", got.LastEvaluatedAt, mark)
	}

	// Without Marks (the webhooks function): the rules' own times.
	if g := New(Deps{Rules: stores.Rules, Now: time.Now}); g.Rules != stores.Rules {
		t.Error("graph without Marks: rules wrapped")
	}
}
