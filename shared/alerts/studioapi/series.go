package studioapi

import (
	"errors"
	"net/http"
	"net/url"
	"time"

	"github.com/voiceops/opsapi/shared/metrics"
	"github.com/voiceops/opsapi/shared/metrics/series"
	"github.com/voiceops/opsapi/shared/platform/httpapi"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// defaultSeriesRange is the range of GET /v1/metrics without from.
const defaultSeriesRange = 24 * time.Hour

// stepNames are the steps of GET /v1/metrics by name (series.Steps).
var stepNames = map[string]time.Duration{"1m": time.Minute, "5m": 5 * time.Minute, "15m": 15 * time.Minute, "1h": time.Hour, "6h": 6 * time.Hour, "1d": 24 * time.Hour}

func stepName(d time.Duration) string {
	for n, s := range stepNames {
		if s == d {
			return n
		}
	}
	return d.String()
}

type pointJSON struct {
	At    string `json:"at"`
	Value *int64 `json:"value"`
}

type seriesJSON struct {
	Metric    string      `json:"metric"`
	ProjectID *string     `json:"project_id"`
	From      string      `json:"from"`
	To        string      `json:"to"`
	Step      string      `json:"step"`
	Data      []pointJSON `json:"data"`
}

// parseTime reads a time of the API: RFC 3339 with an offset.
func parseTime(s string) (time.Time, bool) {
	t, err := time.Parse(time.RFC3339Nano, s)
	return t.UTC(), err == nil
}

// seriesQuery reads the query of GET /v1/metrics; bad values are 400
// naming the parameter.
func seriesQuery(q url.Values, now time.Time) (series.Query, *string, error) {
	var sq series.Query
	var errs []voiceops.FieldError
	bad := func(field, msg string) { errs = append(errs, voiceops.FieldError{Field: field, Message: msg}) }
	for name := range q {
		switch name {
		case "metric", "project_id", "from", "to", "step":
		default:
			bad(name, "is not a known parameter")
		}
	}
	if m, ok := voiceops.ParseEnum(q.Get("metric"), voiceops.Metrics); ok {
		sq.Metric = m
	} else {
		bad("metric", voiceops.OneOf(voiceops.Metrics))
	}
	var project *string
	if q.Has("project_id") {
		v := q.Get("project_id")
		if !voiceops.ValidTenantID(v) {
			bad("project_id", "must be a project ID")
		}
		project = &v
	}
	sq.To = now
	if q.Has("to") {
		t, ok := parseTime(q.Get("to"))
		if !ok {
			bad("to", "must be an RFC 3339 time")
		}
		sq.To = t
	}
	sq.From = sq.To.Add(-defaultSeriesRange)
	if q.Has("from") {
		t, ok := parseTime(q.Get("from"))
		if !ok {
			bad("from", "must be an RFC 3339 time")
		}
		sq.From = t
	}
	if q.Has("step") {
		s, ok := stepNames[q.Get("step")]
		if !ok {
			bad("step", "must be one of 1m, 5m, 15m, 1h, 6h, 1d")
		}
		sq.Step = s
	}
	if len(errs) == 0 && !sq.From.Before(sq.To) {
		bad("from", "must be before to")
	}
	if len(errs) == 0 {
		if sq.Step == 0 {
			sq.Step = series.DefaultStep(sq.From, sq.To, now)
		}
		sq.From, sq.To = series.Align(sq.From, sq.To, sq.Step)
		if field, msg := series.CheckRange(sq.From, sq.To, sq.Step, now); field != "" {
			bad(field, msg)
		}
	}
	if len(errs) > 0 {
		return sq, nil, &voiceops.Error{Kind: voiceops.KindBadRequest, Message: "invalid query parameter", Fields: errs}
	}
	return sq, project, nil
}

// metricSeries answers GET /v1/metrics: a metric's series for the account
// or one of its projects, as a rule on it would have seen it.
func (a *Alerts) metricSeries(w http.ResponseWriter, r *http.Request, p httpapi.Caller) error {
	q, project, err := seriesQuery(r.URL.Query(), a.Now())
	if err != nil {
		return err
	}
	q.Scope = metrics.Scope{AccountID: p.AccountID}
	if project != nil {
		if _, err := a.Projects.GetProject(r.Context(), p.AccountID, *project); err != nil {
			return httpapi.NotFoundAs(err, "project")
		}
		q.Scope.ProjectID = *project
	}
	points, err := a.Series.Read(r.Context(), q)
	if err != nil {
		return err
	}
	out := seriesJSON{Metric: string(q.Metric), ProjectID: project, From: httpapi.Time(q.From), To: httpapi.Time(q.To),
		Step: stepName(q.Step), Data: make([]pointJSON, 0, len(points))}
	for _, pt := range points {
		out.Data = append(out.Data, pointJSON{At: httpapi.Time(pt.At), Value: pt.Value})
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

type previewPointJSON struct {
	At    string `json:"at"`
	Value *int64 `json:"value"`
	State string `json:"state"`
}

type transitionJSON struct {
	At        string  `json:"at"`
	FromState string  `json:"from_state"`
	ToState   string  `json:"to_state"`
	Value     *int64  `json:"value"`
	EventType *string `json:"event_type"`
}

type previewJSON struct {
	From        string             `json:"from"`
	To          string             `json:"to"`
	Data        []previewPointJSON `json:"data"`
	Transitions []transitionJSON   `json:"transitions"`
}

// previewRule answers POST /v1/alert-rules/preview: the create body and a
// range; the rule is replayed over it and nothing is stored or sent.
func (a *Alerts) previewRule(w http.ResponseWriter, r *http.Request, p httpapi.Caller) error {
	o, err := httpapi.ReadObject(w, r, false)
	if err != nil {
		return err
	}
	f := readRuleFields(o, true)
	var from, to time.Time
	if s, ok := o.Str("from", true); ok {
		if from, ok = parseTime(s); !ok {
			o.Fail("from", "must be an RFC 3339 time")
		}
	}
	if s, ok := o.Str("to", true); ok {
		if to, ok = parseTime(s); !ok {
			o.Fail("to", "must be an RFC 3339 time")
		}
	}
	if err := o.Done(); err != nil {
		return err
	}
	now := a.Now()
	from, to = series.Align(from, to, time.Minute)
	if field, msg := series.CheckPreview(from, to, *f.Window, now); field != "" {
		return voiceops.Invalid(voiceops.FieldError{Field: field, Message: msg})
	}
	rule := voiceops.NewRuleFrom("ar_preview", p.AccountID, f, from)
	if rule.ProjectID != nil {
		if _, err := a.Projects.GetProject(r.Context(), p.AccountID, *rule.ProjectID); errors.Is(err, voiceops.ErrNotFound) {
			return voiceops.Invalid(voiceops.FieldError{Field: "project_id", Message: "no such project in this account"})
		} else if err != nil {
			return err
		}
	}
	res, err := a.Series.Preview(r.Context(), rule, from, to)
	if err != nil {
		return err
	}
	out := previewJSON{From: httpapi.Time(from), To: httpapi.Time(to), Data: make([]previewPointJSON, 0, len(res.Points)), Transitions: make([]transitionJSON, 0, len(res.Transitions))}
	for _, pt := range res.Points {
		out.Data = append(out.Data, previewPointJSON{At: httpapi.Time(pt.At), Value: pt.Value, State: string(pt.State)})
	}
	for _, t := range res.Transitions {
		tj := transitionJSON{At: httpapi.Time(t.At), FromState: string(t.From), ToState: string(t.To), Value: t.Value}
		if t.Type != "" {
			typ := string(t.Type)
			tj.EventType = &typ
		}
		out.Transitions = append(out.Transitions, tj)
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}
