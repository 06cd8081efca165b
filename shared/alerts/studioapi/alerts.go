package studioapi

import (
	"net/http"
	"net/url"
	"time"

	"github.com/voiceops/opsapi/shared/alerts/alerting"
	"github.com/voiceops/opsapi/shared/metrics/series"
	"github.com/voiceops/opsapi/shared/platform/httpapi"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// Alerts is the alerts group (functions/alerts): alert rules and the
// firing alerts.
type Alerts struct {
	Rules   voiceops.RuleStore
	Service *alerting.Service
	// Our additions (history.go, series.go): the rules' state history
	// with its events' deliveries, the metric series and the preview.
	History   voiceops.HistoryStore
	Endpoints voiceops.EndpointStore
	Projects  Projects
	Series    *series.Reader
	Silences  voiceops.SilenceStore
	Now       func() time.Time
}

// Routes lists every route of the alerts group (the studio host).
func (a *Alerts) Routes() []httpapi.Route {
	return []httpapi.Route{
		studioRoute("POST", "/v1/alert-rules", a.createRule).Creates(),
		studioRoute("GET", "/v1/alert-rules", a.listRules),
		studioRoute("GET", "/v1/alert-rules/{rule_id}", a.getRule),
		studioRoute("PATCH", "/v1/alert-rules/{rule_id}", a.patchRule),
		studioRoute("DELETE", "/v1/alert-rules/{rule_id}", a.deleteRule),
		studioRoute("GET", "/v1/alerts", a.listAlerts),
		// Our additions (docs/api.md, our additions).
		studioRoute("GET", "/v1/alert-rules/{rule_id}/history", a.ruleHistory),
		studioRoute("POST", "/v1/alert-rules/preview", a.previewRule),
		studioRoute("GET", "/v1/metrics", a.metricSeries),
		studioRoute("POST", "/v1/silences", a.createSilence).Creates(),
		studioRoute("GET", "/v1/silences", a.listSilences),
		studioRoute("DELETE", "/v1/silences/{silence_id}", a.deleteSilence),
		studioRoute("GET", "/v1/account", a.getAccount),
	}
}

// studioRoute is a route of the studio host: an account-scoped API key, the studio host's errors.
func studioRoute(method, path string, h httpapi.Handler) httpapi.Route {
	return httpapi.Route{Method: method, Path: path, Family: httpapi.StudioErrors, Auth: httpapi.AccountKey, Handle: h}
}

// ruleJSON is the alert rule record of the studio host (fromRecord: each field is
// the rule's field of its name or `from` tag).
type ruleJSON struct {
	ID              string  `json:"id"`
	Name            string  `json:"name"`
	ProjectID       *string `json:"project_id"`
	Metric          string  `json:"metric"`
	Operator        string  `json:"operator"`
	ThresholdValue  int64   `json:"threshold_value" from:"Threshold"`
	WindowDuration  string  `json:"window_duration" from:"Window"`
	Enabled         bool    `json:"enabled"`
	CurrentState    string  `json:"current_state" from:"State"`
	CreatedAt       string  `json:"created_at"`
	UpdatedAt       string  `json:"updated_at"`
	Since           *string `json:"since"`
	LastEvaluatedAt *string `json:"last_evaluated_at"`
	CurrentValue    *int64  `json:"current_value"`
}

func toRuleJSON(r voiceops.AlertRule) ruleJSON { return fromRecord[ruleJSON](r) }

// RuleBody is a rule's JSON body as the handlers write it (the OpenAPI
// document's fixtures take it from here).
func RuleBody(r voiceops.AlertRule) any { return toRuleJSON(r) }

// activeAlertJSON is an item of GET /v1/alerts (written by hand:
// appendActiveAlert).
type activeAlertJSON struct {
	AlertRuleID     string  `json:"alert_rule_id" from:"ID"`
	Name            string  `json:"name"`
	Metric          string  `json:"metric"`
	Operator        string  `json:"operator"`
	ThresholdValue  int64   `json:"threshold_value" from:"Threshold"`
	WindowDuration  string  `json:"window_duration" from:"Window"`
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
func readRuleFields(o *httpapi.Object, create bool) voiceops.RulePatch {
	var p voiceops.RulePatch
	// The values the patch points to, in one allocation.
	v := new(struct {
		name      string
		metric    voiceops.Metric
		operator  voiceops.Operator
		threshold int64
		window    voiceops.Window
		enabled   bool
	})
	if name, ok := o.Str("name", create); ok {
		if msg := voiceops.CheckName(name); msg != "" {
			o.Fail("name", msg)
		}
		v.name = name
		p.Name = &v.name
	}
	if pid, ok := o.NullableStr("project_id"); ok {
		if *pid != nil && !voiceops.ValidTenantID(**pid) {
			o.Fail("project_id", "no such project in this account")
		}
		p.ProjectID = pid
	}
	if m, known, ok := httpapi.Enum(o, "metric", create, voiceops.Metrics); ok {
		if known {
			v.metric = m
			p.Metric = &v.metric
		} else {
			o.Fail("metric", voiceops.OneOf(voiceops.Metrics))
		}
	}
	if op, known, ok := httpapi.Enum(o, "operator", create, voiceops.Operators); ok {
		if known {
			v.operator = op
			p.Operator = &v.operator
		} else {
			o.Fail("operator", voiceops.OneOf(voiceops.Operators))
		}
	}
	if t, ok := o.Integer("threshold_value", create, voiceops.ThresholdMessage); ok {
		if msg := voiceops.CheckThreshold(t); msg != "" {
			o.Fail("threshold_value", msg)
		}
		v.threshold = t
		p.Threshold = &v.threshold
	}
	if wd, known, ok := httpapi.Enum(o, "window_duration", create, voiceops.Windows); ok {
		if known {
			v.window = wd
			p.Window = &v.window
		} else {
			o.Fail("window_duration", voiceops.OneOf(voiceops.Windows))
		}
	}
	if e, ok := o.Boolean("enabled", false); ok {
		v.enabled = e
		p.Enabled = &v.enabled
	}
	return p
}

func (a *Alerts) createRule(w http.ResponseWriter, r *http.Request, p httpapi.Caller) error {
	o, err := httpapi.ReadObject(w, r, false)
	if err != nil {
		return err
	}
	f := readRuleFields(o, true)
	if err := o.Done(); err != nil {
		return err
	}
	rule, err := a.Service.CreateRule(r.Context(), p.AccountID, f)
	if err != nil {
		return err
	}
	writeRule(w, http.StatusCreated, rule)
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
		b, ok := httpapi.ParseBool(q.Get("enabled"))
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

func (f ruleFilter) match(r voiceops.AlertRule) bool {
	return (f.enabled == nil || r.Enabled == *f.enabled) &&
		(f.metric == nil || r.Metric == *f.metric) &&
		(f.projectID == nil || (r.ProjectID != nil && *r.ProjectID == *f.projectID)) &&
		(f.state == nil || r.State == *f.state)
}

func (a *Alerts) listRules(w http.ResponseWriter, r *http.Request, p httpapi.Caller) error {
	f, err := parseRuleFilter(r.URL.Query(), "enabled", "metric", "project_id", "state")
	if err != nil {
		return err
	}
	rules, err := a.Rules.ListRules(r.Context(), p.AccountID)
	if err != nil {
		return err
	}
	writeRules(w, rules, f.match)
	return nil
}

func (a *Alerts) listAlerts(w http.ResponseWriter, r *http.Request, p httpapi.Caller) error {
	f, err := parseRuleFilter(r.URL.Query(), "project_id", "metric")
	if err != nil {
		return err
	}
	rules, err := a.Rules.ListRules(r.Context(), p.AccountID)
	if err != nil {
		return err
	}
	writeActiveAlerts(w, rules, f.match)
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

func (a *Alerts) getRule(w http.ResponseWriter, r *http.Request, p httpapi.Caller) error {
	id, err := pathRuleID(r)
	if err != nil {
		return err
	}
	rule, err := a.Rules.GetRule(r.Context(), p.AccountID, id)
	if err != nil {
		return httpapi.NotFoundAs(err, "alert rule")
	}
	writeRule(w, http.StatusOK, rule)
	return nil
}

func (a *Alerts) patchRule(w http.ResponseWriter, r *http.Request, p httpapi.Caller) error {
	id, err := pathRuleID(r)
	if err != nil {
		return err
	}
	o, err := httpapi.ReadObject(w, r, false)
	if err != nil {
		return err
	}
	patch := readRuleFields(o, false)
	if err := o.Done(); err != nil {
		return err
	}
	rule, err := a.Service.PatchRule(r.Context(), p.AccountID, id, patch)
	if err != nil {
		return httpapi.NotFoundAs(err, "alert rule")
	}
	writeRule(w, http.StatusOK, rule)
	return nil
}

func (a *Alerts) deleteRule(w http.ResponseWriter, r *http.Request, p httpapi.Caller) error {
	id, err := pathRuleID(r)
	if err != nil {
		return err
	}
	if err := a.Service.DeleteRule(r.Context(), p.AccountID, id); err != nil {
		return httpapi.NotFoundAs(err, "alert rule")
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
