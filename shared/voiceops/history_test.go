package voiceops

import (
	"testing"
	"time"
)

func TestEvaluatedRecordsTheChange(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	r := NewRule("ar_x", "acct_x", RuleInput{Name: "n", Metric: MetricAPIErrors, Operator: OpGreater, Threshold: 2, Window: Window5m}, t0)
	same, _ := r.Evaluated(Outcome{Value: 1}, t0.Add(time.Minute))
	if same.Change != nil {
		t.Errorf("ok -> ok recorded a change: %+v", same.Change)
	}
	fired, ev := same.Evaluated(Outcome{Value: 5}, t0.Add(2*time.Minute))
	if ev == nil || fired.Change == nil {
		t.Fatalf("ok -> alert: event %v, change %v", ev, fired.Change)
	}
	c := *fired.Change
	if c.From != StateOK || c.To != StateAlert || c.EventID != ev.ID || c.Value == nil || *c.Value != 5 || !c.At.Equal(t0.Add(2*time.Minute)) {
		t.Errorf("change = %+v", c)
	}
	// The change is of this write only: the next evaluation starts clean.
	again, _ := fired.Evaluated(Outcome{Value: 6}, t0.Add(3*time.Minute))
	if again.Change != nil {
		t.Errorf("alert -> alert carried a change: %+v", again.Change)
	}
	nodata, ev := fired.Evaluated(Outcome{NoData: true}, t0.Add(4*time.Minute))
	if nodata.Change == nil || nodata.Change.To != StateNoData || nodata.Change.Value != nil || ev == nil || nodata.Change.EventID != ev.ID {
		t.Errorf("alert -> no_data: change %+v, event %v", nodata.Change, ev)
	}
	off := false
	disabled, _ := RulePatch{Enabled: &off}.Apply(fired, t0.Add(5*time.Minute))
	if disabled.Change == nil || disabled.Change.From != StateAlert || disabled.Change.To != StateUnknown {
		t.Errorf("disabling: change %+v", disabled.Change)
	}
	renamed := "other"
	if got, _ := (RulePatch{Name: &renamed}).Apply(fired, t0.Add(5*time.Minute)); got.Change != nil {
		t.Errorf("renaming recorded a change: %+v", got.Change)
	}
}

func TestHistoryCursor(t *testing.T) {
	c := StateChange{At: time.UnixMilli(1764000000123).UTC(), Version: 42}
	at, v, ok := ParseHistoryCursor(HistoryCursor(c))
	if !ok || !at.Equal(c.At) || v != 42 {
		t.Errorf("round trip = %v %v %v", at, v, ok)
	}
}
