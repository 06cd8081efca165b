package studioapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
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
	var matchers matcherErrors
	if raw, ok := o.Take("matchers", true, false); ok {
		s.Matchers, matchers = a.readMatchers(r.Context(), p.AccountID, raw)
	}
	defer matchers.wait() // no lookup outlives the request
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
	if o.Done() != nil || matchers.failed() {
		// Invalid whatever the lookups say: every error at once, the
		// matchers' first (they are the body's first field read).
		errs, err := matchers.wait()
		if err != nil {
			return err
		}
		return voiceops.Invalid(append(errs, o.Errors()...)...)
	}
	// Valid but for the lookups, which the store waits for alongside its
	// first read: the matchers' rule and project are read in parallel
	// with the account's silences version.
	if err := a.Silences.CreateSilence(r.Context(), s, now, matchers.check); err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusCreated, toSilenceJSON(s))
	return nil
}

// matcherErrors are the field errors of the matchers, in body order, some
// of them still being looked up (a rule_id's rule, a project_id's
// project: reads started as the matchers were read).
type matcherErrors struct {
	entries []matcherError
	// waitFn waits for the lookups and returns the errors, or the first
	// failed lookup's error (done sets it; nil for no matchers).
	waitFn func() ([]voiceops.FieldError, error)
}

// matcherError is one field error, or one lookup that may make one.
type matcherError struct {
	voiceops.FieldError
	lookup func() (string, error) // the message ("" for none), once read
}

// failed reports whether a matcher is invalid without any lookup.
func (m matcherErrors) failed() bool {
	for _, e := range m.entries {
		if e.lookup == nil {
			return true
		}
	}
	return false
}

// wait returns every error of the matchers once the lookups are done.
func (m matcherErrors) wait() ([]voiceops.FieldError, error) {
	if m.waitFn == nil {
		return nil, nil
	}
	return m.waitFn()
}

// check is the store's check of a valid body (SilenceStore.CreateSilence):
// the lookups' errors as one 422.
func (m matcherErrors) check() error {
	errs, err := m.wait()
	if err != nil {
		return err
	}
	if len(errs) > 0 {
		return voiceops.Invalid(errs...)
	}
	return nil
}

// readMatchers reads the matchers: [{name, value}], each name at most once.
// A rule_id or project_id must name a rule or project of the caller's
// account (another account's is no such rule or project): those lookups
// start here and run while the rest of the body is read; the errors
// returned say, once waited for, what each found.
func (a *Alerts) readMatchers(ctx context.Context, accountID string, raw json.RawMessage) ([]voiceops.SilenceMatcher, matcherErrors) {
	var me matcherErrors
	fail := func(field, msg string) {
		me.entries = append(me.entries, matcherError{FieldError: voiceops.FieldError{Field: field, Message: msg}})
	}
	var items []json.RawMessage
	if raw[0] != '[' || json.Unmarshal(raw, &items) != nil {
		fail("matchers", "must be an array of {name, value}")
		return nil, me.done()
	}
	if len(items) > len(voiceops.MatcherNames) {
		fail("matchers", fmt.Sprintf("must hold at most %d matchers, one per name", len(voiceops.MatcherNames)))
		return nil, me.done()
	}
	var out []voiceops.SilenceMatcher
	seen := map[voiceops.MatcherName]bool{}
	for i, item := range items {
		field := fmt.Sprintf("matchers[%d]", i)
		m, err := httpapi.ParseObject(item)
		if err != nil {
			fail(field, "must be an object {name, value}")
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
		var lookup func() (string, error)
		if nameOK && known && valueOK {
			sm = voiceops.SilenceMatcher{Name: n, Value: *value}
			msg, read := a.checkMatcher(accountID, sm)
			if msg != "" {
				m.Fail("value", msg)
			}
			if read != nil {
				lookup = start(ctx, read)
			}
		}
		before := len(m.Errors())
		_ = m.Done()
		errs := m.Errors()
		for _, fe := range errs[:before] {
			fail(field+"."+fe.Field, fe.Message)
		}
		if lookup != nil {
			me.entries = append(me.entries, matcherError{FieldError: voiceops.FieldError{Field: field + ".value"}, lookup: lookup})
		}
		for _, fe := range errs[before:] {
			fail(field+"."+fe.Field, fe.Message)
		}
		out = append(out, sm)
	}
	return out, me.done()
}

// done sets the memoized wait of the errors read.
func (m matcherErrors) done() matcherErrors {
	entries := m.entries
	m.waitFn = sync.OnceValues(func() ([]voiceops.FieldError, error) {
		var out []voiceops.FieldError
		var first error
		for _, e := range entries {
			if e.lookup == nil {
				out = append(out, e.FieldError)
				continue
			}
			msg, err := e.lookup()
			if err != nil && first == nil {
				first = err
			}
			if msg != "" {
				out = append(out, voiceops.FieldError{Field: e.Field, Message: msg})
			}
		}
		return out, first
	})
	return m
}

// start runs a lookup now and returns its result once done.
func start(ctx context.Context, read func(context.Context) (string, error)) func() (string, error) {
	type result struct {
		msg string
		err error
	}
	ch := make(chan result, 1)
	go func() {
		msg, err := read(ctx)
		ch <- result{msg, err}
	}()
	return sync.OnceValues(func() (string, error) {
		r := <-ch
		return r.msg, r.err
	})
}

// checkMatcher returns what is wrong with a matcher's value that no read
// is needed to tell ("" when nothing is), and the read that tells the
// rest (nil when none is needed): whether its rule or project is one of
// the account's. The read's error is a failed lookup, not the caller's.
func (a *Alerts) checkMatcher(accountID string, m voiceops.SilenceMatcher) (string, func(context.Context) (string, error)) {
	if m.Value == nil {
		if m.Name == voiceops.MatchProjectID {
			return "", nil
		}
		return "must be a string (null only for project_id: the account-wide rules)", nil
	}
	v := *m.Value
	switch m.Name {
	case voiceops.MatchRuleID:
		const missing = "no such alert rule in this account"
		if !voiceops.ValidRuleID(v) || len(v) > voiceops.MaxIDLength {
			return missing, nil
		}
		return "", func(ctx context.Context) (string, error) {
			_, err := a.Service.Rules.GetRule(ctx, accountID, v) // the store's own: whether it exists, no marks
			if errors.Is(err, voiceops.ErrNotFound) {
				return missing, nil
			}
			return "", err
		}
	case voiceops.MatchProjectID:
		const missing = "no such project in this account"
		if !voiceops.ValidTenantID(v) {
			return missing, nil
		}
		return "", func(ctx context.Context) (string, error) {
			_, err := a.Projects.GetProject(ctx, accountID, v)
			if errors.Is(err, voiceops.ErrNotFound) {
				return missing, nil
			}
			return "", err
		}
	case voiceops.MatchMetric:
		if _, ok := voiceops.ParseEnum(v, voiceops.Metrics); !ok {
			return voiceops.OneOf(voiceops.Metrics), nil
		}
	}
	return "", nil
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

// deleteSilence ends the silence now (one not started yet is removed);
// the end wakes the evaluator for the rules it held back.
func (a *Alerts) deleteSilence(w http.ResponseWriter, r *http.Request, p httpapi.Caller) error {
	id := r.PathValue("silence_id")
	if !voiceops.ValidSilenceID(id) {
		return voiceops.Invalid(voiceops.FieldError{Field: "silence_id", Message: "must match ^sil_[A-Za-z0-9]+$"})
	}
	if len(id) > voiceops.MaxIDLength {
		return httpapi.NotFoundAs(voiceops.ErrNotFound, "silence")
	}
	if _, err := a.Silences.EndSilence(r.Context(), p.AccountID, id, a.Now()); err != nil {
		return httpapi.NotFoundAs(err, "silence")
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
