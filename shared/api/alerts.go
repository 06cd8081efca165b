package api

import (
	"errors"
	"net/http"
	"net/url"
	"time"

	"github.com/voiceops/opsapi/shared/voiceops"
)

// alertsRoutes lists every route of the alerts group (doc 1).
func alertsRoutes(s *server, mux *http.ServeMux) {
	mux.Handle("POST /v1/alert-rules", s.doc1(s.createRule))
	mux.Handle("GET /v1/alert-rules", s.doc1(s.listRules))
	mux.Handle("GET /v1/alert-rules/{rule_id}", s.doc1(s.getRule))
	mux.Handle("PATCH /v1/alert-rules/{rule_id}", s.doc1(s.patchRule))
	mux.Handle("DELETE /v1/alert-rules/{rule_id}", s.doc1(s.deleteRule))
	mux.Handle("GET /v1/alerts", s.doc1(s.listAlerts))
}

// timeFormat is how every time is written: UTC, millisecond precision.
const timeFormat = "2006-01-02T15:04:05.000Z"

func formatTime(t time.Time) string { return t.UTC().Format(timeFormat) }

func formatTimePtr(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := formatTime(*t)
	return &s
}

// ruleJSON is the alert rule record of doc 1.
type ruleJSON struct {
	ID              string  `json:"id"`
	Name            string  `json:"name"`
	ProjectID       *string `json:"project_id"`
	Metric          string  `json:"metric"`
	Operator        string  `json:"operator"`
	ThresholdValue  int64   `json:"threshold_value"`
	WindowDuration  string  `json:"window_duration"`
	Enabled         bool    `json:"enabled"`
	CurrentState    string  `json:"current_state"`
	CreatedAt       string  `json:"created_at"`
	UpdatedAt       string  `json:"updated_at"`
	Since           *string `json:"since"`
	LastEvaluatedAt *string `json:"last_evaluated_at"`
	CurrentValue    *int64  `json:"current_value"`
}

func toRuleJSON(r voiceops.AlertRule) ruleJSON {
	return ruleJSON{
		ID: r.ID, Name: r.Name, ProjectID: r.ProjectID, Metric: string(r.Metric), Operator: string(r.Operator),
		ThresholdValue: r.Threshold, WindowDuration: string(r.Window), Enabled: r.Enabled,
		CurrentState: string(r.State), CreatedAt: formatTime(r.CreatedAt), UpdatedAt: formatTime(r.UpdatedAt),
		Since: formatTimePtr(r.Since), LastEvaluatedAt: formatTimePtr(r.LastEvaluatedAt), CurrentValue: r.CurrentValue,
	}
}

// activeAlertJSON is an item of GET /v1/alerts.
type activeAlertJSON struct {
	AlertRuleID     string  `json:"alert_rule_id"`
	Name            string  `json:"name"`
	Metric          string  `json:"metric"`
	Operator        string  `json:"operator"`
	ThresholdValue  int64   `json:"threshold_value"`
	WindowDuration  string  `json:"window_duration"`
	Since           *string `json:"since"`
	ProjectID       *string `json:"project_id"`
	LastEvaluatedAt *string `json:"last_evaluated_at"`
	CurrentValue    *int64  `json:"current_value"`
}

type listJSON[T any] struct {
	Data []T `json:"data"`
}

// readRuleFields reads the fields shared by create and PATCH. On create the
// required ones must be present.
func readRuleFields(o *object, create bool) voiceops.RulePatch {
	var p voiceops.RulePatch
	if name, ok := o.str("name", create); ok {
		if msg := voiceops.CheckName(name); msg != "" {
			o.fail("name", msg)
		}
		p.Name = &name
	}
	if pid, ok := o.nullableStr("project_id"); ok {
		if *pid != nil && !voiceops.ValidTenantID(**pid) {
			o.fail("project_id", "no such project in this account")
		}
		p.ProjectID = pid
	}
	if v, ok := o.str("metric", create); ok {
		if m, ok := voiceops.ParseEnum(v, voiceops.Metrics); ok {
			p.Metric = &m
		} else {
			o.fail("metric", voiceops.OneOf(voiceops.Metrics))
		}
	}
	if v, ok := o.str("operator", create); ok {
		if op, ok := voiceops.ParseEnum(v, voiceops.Operators); ok {
			p.Operator = &op
		} else {
			o.fail("operator", voiceops.OneOf(voiceops.Operators))
		}
	}
	if v, ok := o.integer("threshold_value", create, voiceops.CheckThreshold(-1)); ok {
		if msg := voiceops.CheckThreshold(v); msg != "" {
			o.fail("threshold_value", msg)
		}
		p.Threshold = &v
	}
	if v, ok := o.str("window_duration", create); ok {
		if wd, ok := voiceops.ParseEnum(v, voiceops.Windows); ok {
			p.Window = &wd
		} else {
			o.fail("window_duration", voiceops.OneOf(voiceops.Windows))
		}
	}
	if v, ok := o.boolean("enabled", false); ok {
		p.Enabled = &v
	}
	return p
}

func (s *server) createRule(w http.ResponseWriter, r *http.Request, p voiceops.Principal) error {
	o, err := readObject(w, r, false)
	if err != nil {
		return err
	}
	f := readRuleFields(o, true)
	if err := o.done(); err != nil {
		return err
	}
	in := voiceops.RuleInput{Name: *f.Name, Metric: *f.Metric, Operator: *f.Operator, Threshold: *f.Threshold, Window: *f.Window, Enabled: f.Enabled}
	if f.ProjectID != nil {
		in.ProjectID = *f.ProjectID
	}
	rule := voiceops.NewRule(voiceops.NewID(voiceops.PrefixRule), p.AccountID, in, s.Now().UTC().Truncate(time.Millisecond))
	if err := s.Stores.Rules.CreateRule(r.Context(), rule); err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, toRuleJSON(rule))
	return nil
}

// ruleFilter is the query of GET /v1/alert-rules and GET /v1/alerts; bad
// values are 400 naming the parameter.
type ruleFilter struct {
	enabled   *bool
	metric    *voiceops.Metric
	projectID *string
	state     *voiceops.State
}

func parseRuleFilter(q url.Values, allowed ...string) (ruleFilter, error) {
	var f ruleFilter
	var errs []voiceops.FieldError
	has := func(name string) bool {
		for _, a := range allowed {
			if a == name {
				return q.Has(name)
			}
		}
		return false
	}
	if has("enabled") {
		b, ok := parseBool(q.Get("enabled"))
		if !ok {
			errs = append(errs, voiceops.FieldError{Field: "enabled", Message: "must be true or false"})
		}
		f.enabled = &b
	}
	if has("metric") {
		m, ok := voiceops.ParseEnum(q.Get("metric"), voiceops.Metrics)
		if !ok {
			errs = append(errs, voiceops.FieldError{Field: "metric", Message: voiceops.OneOf(voiceops.Metrics)})
		}
		f.metric = &m
	}
	if has("project_id") {
		v := q.Get("project_id")
		if v == "" {
			errs = append(errs, voiceops.FieldError{Field: "project_id", Message: "must not be empty"})
		}
		f.projectID = &v
	}
	if has("state") {
		st, ok := voiceops.ParseEnum(q.Get("state"), voiceops.States)
		if !ok {
			errs = append(errs, voiceops.FieldError{Field: "state", Message: voiceops.OneOf(voiceops.States)})
		}
		f.state = &st
	}
	if len(errs) > 0 {
		return f, &voiceops.Error{Kind: voiceops.KindBadRequest, Message: "invalid query parameter", Fields: errs}
	}
	return f, nil
}

func parseBool(s string) (bool, bool) {
	switch s {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	return false, false
}

func (f ruleFilter) match(r voiceops.AlertRule) bool {
	return (f.enabled == nil || r.Enabled == *f.enabled) &&
		(f.metric == nil || r.Metric == *f.metric) &&
		(f.projectID == nil || (r.ProjectID != nil && *r.ProjectID == *f.projectID)) &&
		(f.state == nil || r.State == *f.state)
}

func (s *server) listRules(w http.ResponseWriter, r *http.Request, p voiceops.Principal) error {
	f, err := parseRuleFilter(r.URL.Query(), "enabled", "metric", "project_id", "state")
	if err != nil {
		return err
	}
	rules, err := s.Stores.Rules.ListRules(r.Context(), p.AccountID)
	if err != nil {
		return err
	}
	out := listJSON[ruleJSON]{Data: make([]ruleJSON, 0, len(rules))}
	for _, rule := range rules {
		if f.match(rule) {
			out.Data = append(out.Data, toRuleJSON(rule))
		}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *server) listAlerts(w http.ResponseWriter, r *http.Request, p voiceops.Principal) error {
	f, err := parseRuleFilter(r.URL.Query(), "project_id", "metric")
	if err != nil {
		return err
	}
	rules, err := s.Stores.Rules.ListRules(r.Context(), p.AccountID)
	if err != nil {
		return err
	}
	out := listJSON[activeAlertJSON]{Data: []activeAlertJSON{}}
	for _, rule := range rules {
		if !rule.Enabled || rule.State != voiceops.StateAlert || !f.match(rule) {
			continue
		}
		out.Data = append(out.Data, activeAlertJSON{
			AlertRuleID: rule.ID, Name: rule.Name, Metric: string(rule.Metric), Operator: string(rule.Operator),
			ThresholdValue: rule.Threshold, WindowDuration: string(rule.Window), Since: formatTimePtr(rule.Since),
			ProjectID: rule.ProjectID, LastEvaluatedAt: formatTimePtr(rule.LastEvaluatedAt), CurrentValue: rule.CurrentValue,
		})
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// pathRuleID returns the rule ID of the path: malformed is 422, and an ID
// too long to exist is 404 without a store read.
func pathRuleID(r *http.Request) (string, error) {
	id := r.PathValue("rule_id")
	if !voiceops.ValidRuleID(id) {
		return "", voiceops.Invalid(voiceops.FieldError{Field: "rule_id", Message: "must match ^ar_[A-Za-z0-9]+$"})
	}
	if len(id) > voiceops.MaxIDLength {
		return "", voiceops.ErrNotFound
	}
	return id, nil
}

func (s *server) getRule(w http.ResponseWriter, r *http.Request, p voiceops.Principal) error {
	id, err := pathRuleID(r)
	if err != nil {
		return err
	}
	rule, err := s.Stores.Rules.GetRule(r.Context(), p.AccountID, id)
	if err != nil {
		return notFoundAs(err, "alert rule")
	}
	writeJSON(w, http.StatusOK, toRuleJSON(rule))
	return nil
}

// updateAttempts bounds the optimistic-concurrency retries of a PATCH: only
// a concurrent writer of the same record makes a second attempt necessary.
const updateAttempts = 3

func (s *server) patchRule(w http.ResponseWriter, r *http.Request, p voiceops.Principal) error {
	id, err := pathRuleID(r)
	if err != nil {
		return err
	}
	o, err := readObject(w, r, false)
	if err != nil {
		return err
	}
	patch := readRuleFields(o, false)
	if err := o.done(); err != nil {
		return err
	}
	for attempt := 0; ; attempt++ {
		cur, err := s.Stores.Rules.GetRule(r.Context(), p.AccountID, id)
		if err != nil {
			return notFoundAs(err, "alert rule")
		}
		next, changed := patch.Apply(cur, s.Now().UTC().Truncate(time.Millisecond))
		if !changed {
			writeJSON(w, http.StatusOK, toRuleJSON(cur))
			return nil
		}
		next.Version = cur.Version + 1
		// Disabling a firing rule resolves it: the event is written with
		// the change (DECISIONS.md, "Alert rules").
		var events []voiceops.AlertEvent
		if ev := voiceops.TransitionEvent(cur.State, next, next.UpdatedAt); ev != nil {
			events = append(events, *ev)
		}
		err = s.Stores.Rules.UpdateRule(r.Context(), next, cur.Version, patch.ProjectChanged(cur), events...)
		if errors.Is(err, voiceops.ErrConflictingWrite) && attempt+1 < updateAttempts {
			continue
		}
		if err != nil {
			return notFoundAs(err, "alert rule")
		}
		s.fanout(r.Context(), events)
		writeJSON(w, http.StatusOK, toRuleJSON(next))
		return nil
	}
}

func (s *server) deleteRule(w http.ResponseWriter, r *http.Request, p voiceops.Principal) error {
	id, err := pathRuleID(r)
	if err != nil {
		return err
	}
	// Deleting a firing rule resolves it; the resolved event says the rule
	// is now "unknown" (it no longer exists to be evaluated).
	now := s.Now().UTC().Truncate(time.Millisecond)
	var events []voiceops.AlertEvent
	_, err = s.Stores.Rules.DeleteRule(r.Context(), p.AccountID, id, func(cur voiceops.AlertRule) []voiceops.AlertEvent {
		gone := cur
		gone.State = voiceops.StateUnknown
		events = nil
		if ev := voiceops.TransitionEvent(cur.State, gone, now); ev != nil {
			events = append(events, *ev)
		}
		return events
	})
	if err != nil {
		return notFoundAs(err, "alert rule")
	}
	s.fanout(r.Context(), events)
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// notFoundAs names the missing resource in a not-found error.
func notFoundAs(err error, what string) error {
	if errors.Is(err, voiceops.ErrNotFound) {
		return voiceops.Errorf(voiceops.KindNotFound, "%s not found", what)
	}
	return err
}
