package voiceops

import (
	"testing"
	"time"
)

func TestOperatorBreached(t *testing.T) {
	cases := []struct {
		op       Operator
		v, th    int64
		breached bool
	}{
		{OpGreater, 11, 10, true}, {OpGreater, 10, 10, false},
		{OpGreaterEqual, 10, 10, true}, {OpGreaterEqual, 9, 10, false},
		{OpLess, 9, 10, true}, {OpLess, 10, 10, false},
		{OpLessEqual, 10, 10, true}, {OpLessEqual, 11, 10, false},
		{Operator("=="), 10, 10, false},
	}
	for _, c := range cases {
		if got := c.op.Breached(c.v, c.th); got != c.breached {
			t.Errorf("%d %s %d = %v", c.v, c.op, c.th, got)
		}
	}
}

func TestRulePatchApply(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r := NewRule("ar_1", "acct", RuleInput{Name: "n", Metric: MetricAPIErrors, Operator: OpGreater, Threshold: 1, Window: Window5m}, t0)
	if _, changed := (RulePatch{}).Apply(r, t0.Add(time.Hour)); changed {
		t.Error("empty patch changed the rule")
	}
	same := "n"
	if _, changed := (RulePatch{Name: &same}).Apply(r, t0.Add(time.Hour)); changed {
		t.Error("patch to the same value changed the rule")
	}
	off := false
	t1 := t0.Add(time.Minute)
	got, changed := RulePatch{Enabled: &off}.Apply(r, t1)
	if !changed || got.State != StateUnknown || !got.Since.Equal(t1) || !got.UpdatedAt.Equal(t1) {
		t.Errorf("disable: %+v", got)
	}
	var none *string
	p := "proj"
	r.ProjectID = &p
	got, changed = RulePatch{ProjectID: &none}.Apply(r, t1)
	if !changed || got.ProjectID != nil {
		t.Errorf("account-wide: %+v", got)
	}
}

func TestWindowDurations(t *testing.T) {
	for w, d := range map[Window]time.Duration{Window5m: 5 * time.Minute, Window10m: 10 * time.Minute, Window60m: time.Hour, "2h": 0} {
		if w.Duration() != d {
			t.Errorf("%s = %v", w, w.Duration())
		}
	}
}

func TestCheckURLPolicy(t *testing.T) {
	strict, dev := URLPolicy{}, URLPolicy{AllowLoopback: true}
	cases := []struct {
		url         string
		strict, dev bool // valid under each policy
	}{
		{"https://hooks.example.com/x?y=1", true, true},
		{"https://hooks.example.com:8443/x", true, true},
		{"https://8.8.8.8/", true, true},
		{"http://hooks.example.com/", false, false},
		{"http://127.0.0.1:9000/hook", false, true},
		{"https://localhost:9000/hook", false, true},
		{"http://[::1]:9000/", false, true},
		{"http://10.0.0.1/", false, false},
		{"https://192.168.0.10/", false, false},
		{"https://[fe80::1]/", false, false},
		{"https://224.0.0.1/", false, false},
		{"ftp://example.com/", false, false},
	}
	for _, c := range cases {
		if got := strict.CheckURL(c.url) == ""; got != c.strict {
			t.Errorf("strict %s: valid=%v (%s)", c.url, got, strict.CheckURL(c.url))
		}
		if got := dev.CheckURL(c.url) == ""; got != c.dev {
			t.Errorf("dev %s: valid=%v (%s)", c.url, got, dev.CheckURL(c.url))
		}
	}
}
