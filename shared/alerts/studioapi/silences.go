package studioapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"
	"unicode/utf8"

	"github.com/voiceops/opsapi/shared/platform/httpapi"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// Our addition: silences (docs/alerting.md, "Silences").

// silenceJSON is the silence record of the studio host.
type silenceJSON struct {
	ID        string        `json:"id"`
	Matchers  []matcherJSON `json:"matchers"`
	StartsAt  string        `json:"starts_at"`
	EndsAt    string        `json:"ends_at"`
	Comment   string        `json:"comment"`
	CreatedAt string        `json:"created_at"`
}

type matcherJSON struct {
	Name  string  `json:"name"`
	Value *string `json:"value"`
}

func toSilenceJSON(s voiceops.Silence) silenceJSON {
	out := silenceJSON{ID: s.ID, Matchers: make([]matcherJSON, len(s.Matchers)), StartsAt: httpapi.Time(s.StartsAt),
		EndsAt: httpapi.Time(s.EndsAt), Comment: s.Comment, CreatedAt: httpapi.Time(s.CreatedAt)}
	for i, m := range s.Matchers {
		out.Matchers[i] = matcherJSON{Name: string(m.Name), Value: m.Value}
	}
	return out
}

// SilenceBody is a silence's JSON body as the handlers write it (the
// OpenAPI document's fixtures take it from here).
func SilenceBody(s voiceops.Silence) any { return toSilenceJSON(s) }

func (a *Alerts) createSilence(w http.ResponseWriter, r *http.Request, p httpapi.Caller) error {
	o, err := httpapi.ReadObject(w, r, false)
	if err != nil {
		return err
	}
	now := a.Now().UTC().Truncate(time.Millisecond)
	s := voiceops.Silence{ID: voiceops.NewID(voiceops.PrefixSilence), AccountID: p.AccountID, StartsAt: now, CreatedAt: now}
	if raw, ok := o.Take("matchers", true, false); ok {
		if s.Matchers, err = a.readMatchers(r, p.AccountID, raw, o); err != nil {
			return err
		}
	}
	startsOK, endsOK := true, false
	if v, ok := o.Str("starts_at", false); ok {
		if s.StartsAt, startsOK = parseTime(v); !startsOK {
			o.Fail("starts_at", "must be an RFC 3339 time")
		}
	}
	if v, ok := o.Str("ends_at", true); ok {
		if s.EndsAt, endsOK = parseTime(v); !endsOK {
			o.Fail("ends_at", "must be an RFC 3339 time")
		}
	}
	s.StartsAt, s.EndsAt = s.StartsAt.Truncate(time.Millisecond), s.EndsAt.Truncate(time.Millisecond)
	if startsOK && endsOK {
		o.FailAll(voiceops.CheckSilenceTimes(s.StartsAt, s.EndsAt, now)...)
	}
	if v, ok := o.Str("comment", false); ok {
		if utf8.RuneCountInString(v) > voiceops.MaxSilenceComment {
			o.Fail("comment", fmt.Sprintf("must be at most %d characters", voiceops.MaxSilenceComment))
		}
		s.Comment = v
	}
	if err := o.Done(); err != nil {
		return err
	}
	if err := a.Silences.CreateSilence(r.Context(), s, now); err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusCreated, toSilenceJSON(s))
	return nil
}

// readMatchers reads the matchers: [{name, value}], each name at most once.
// A rule_id or project_id must name a rule or project of the caller's
// account (another account's is no such rule or project). The error is a
// failed lookup, not the caller's.
func (a *Alerts) readMatchers(r *http.Request, accountID string, raw json.RawMessage, o *httpapi.Object) ([]voiceops.SilenceMatcher, error) {
	var items []json.RawMessage
	if raw[0] != '[' || json.Unmarshal(raw, &items) != nil {
		o.Fail("matchers", "must be an array of {name, value}")
		return nil, nil
	}
	if len(items) > len(voiceops.MatcherNames) {
		o.Fail("matchers", fmt.Sprintf("must hold at most %d matchers, one per name", len(voiceops.MatcherNames)))
		return nil, nil
	}
	var out []voiceops.SilenceMatcher
	seen := map[voiceops.MatcherName]bool{}
	for i, item := range items {
		field := fmt.Sprintf("matchers[%d]", i)
		m, err := httpapi.ParseObject(item)
		if err != nil {
			o.Fail(field, "must be an object {name, value}")
			continue
		}
		var sm voiceops.SilenceMatcher
		name, nameOK := m.Str("name", true)
		value, valueOK := m.NullableStr("value")
		if !m.Has("value") {
			m.Fail("value", "is required")
		}
		n, known := voiceops.ParseEnum(name, voiceops.MatcherNames)
		switch {
		case !nameOK:
		case !known:
			m.Fail("name", voiceops.OneOf(voiceops.MatcherNames))
		case seen[n]:
			m.Fail("name", "must not repeat another matcher's name")
		}
		seen[n] = true
		if nameOK && known && valueOK {
			sm = voiceops.SilenceMatcher{Name: n, Value: *value}
			msg, err := a.checkMatcher(r, accountID, sm)
			if err != nil {
				return nil, err
			}
			if msg != "" {
				m.Fail("value", msg)
			}
		}
		_ = m.Done()
		for _, fe := range m.Errors() {
			o.Fail(field+"."+fe.Field, fe.Message)
		}
		out = append(out, sm)
	}
	return out, nil
}

// checkMatcher returns what is wrong with a matcher's value, "" when
// nothing is; the error is a failed lookup.
func (a *Alerts) checkMatcher(r *http.Request, accountID string, m voiceops.SilenceMatcher) (string, error) {
	if m.Value == nil {
		if m.Name == voiceops.MatchProjectID {
			return "", nil
		}
		return "must be a string (null only for project_id: the account-wide rules)", nil
	}
	v := *m.Value
	var err error
	switch m.Name {
	case voiceops.MatchRuleID:
		if !voiceops.ValidRuleID(v) || len(v) > voiceops.MaxIDLength {
			return "no such alert rule in this account", nil
		}
		if _, err = a.Rules.GetRule(r.Context(), accountID, v); errors.Is(err, voiceops.ErrNotFound) {
			return "no such alert rule in this account", nil
		}
	case voiceops.MatchProjectID:
		if !voiceops.ValidTenantID(v) {
			return "no such project in this account", nil
		}
		if _, err = a.Projects.GetProject(r.Context(), accountID, v); errors.Is(err, voiceops.ErrNotFound) {
			return "no such project in this account", nil
		}
	case voiceops.MatchMetric:
		if _, ok := voiceops.ParseEnum(v, voiceops.Metrics); !ok {
			return voiceops.OneOf(voiceops.Metrics), nil
		}
	}
	return "", err
}

func (a *Alerts) listSilences(w http.ResponseWriter, r *http.Request, p httpapi.Caller) error {
	ss, err := a.Silences.ListSilences(r.Context(), p.AccountID, a.Now())
	if err != nil {
		return err
	}
	out := listJSON[silenceJSON]{Data: make([]silenceJSON, 0, len(ss))}
	for _, s := range ss {
		out.Data = append(out.Data, toSilenceJSON(s))
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

// deleteSilence ends the silence now (one not started yet is removed),
// and wakes the evaluator for the rules it held back.
func (a *Alerts) deleteSilence(w http.ResponseWriter, r *http.Request, p httpapi.Caller) error {
	id := r.PathValue("silence_id")
	if !voiceops.ValidSilenceID(id) {
		return voiceops.Invalid(voiceops.FieldError{Field: "silence_id", Message: "must match ^sil_[A-Za-z0-9]+$"})
	}
	if len(id) > voiceops.MaxIDLength {
		return httpapi.NotFoundAs(voiceops.ErrNotFound, "silence")
	}
	now := a.Now()
	ended, err := a.Silences.EndSilence(r.Context(), p.AccountID, id, now)
	if err != nil {
		return httpapi.NotFoundAs(err, "silence")
	}
	a.Service.SilenceEnded(r.Context(), ended, now)
	w.WriteHeader(http.StatusNoContent)
	return nil
}
