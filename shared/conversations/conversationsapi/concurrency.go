package conversationsapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"time"

	"github.com/voiceops/opsapi/shared/conversations/concurrency"
	"github.com/voiceops/opsapi/shared/platform/httpapi"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// Concurrency is the concurrency series (functions/conversations).
type Concurrency struct {
	Store voiceops.ConversationStore
	Now   func() time.Time
	// newCounter starts the count of a series (nil: concurrency.NewCounter,
	// the sweep). The benchmarks set it to their baselines, measured on
	// the same request and reads.
	newCounter func(w concurrency.Windows, f concurrency.Filter, byVariant bool, now time.Time) seriesCounter
}

// seriesCounter is what the handler feeds the conversations it reads.
type seriesCounter interface {
	Add(convs ...voiceops.Conversation)
	Series() []concurrency.Series
}

// Routes lists the concurrency route (the base host).
func (g *Concurrency) Routes() []httpapi.Route {
	return []httpapi.Route{httpapi.BaseRoute("GET", "/v1/{account_id}/{project_id}/conversations/concurrency", httpapi.ProjectKey, g.concurrency)}
}

// concurrencyPage is how many conversations one read of the series asks
// the store for: few reads (each re-reads the store's hour index and may
// read ahead), while a page stays some tens of MB at most. A variable for
// the tests.
var concurrencyPage = 50_000

// maxConcurrencyBytes bounds a series' JSON under the Lambda response
// limit, like a page of the conversations list.
const maxConcurrencyBytes = 5 << 20

// The times a series may cover: Unix nanoseconds (the sweep's unit) and
// conversation IDs hold them.
var (
	minSeriesTime = time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC)
	maxSeriesTime = time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC)
)

// concurrencyQuery is the query of GET .../conversations/concurrency.
type concurrencyQuery struct {
	windows   concurrency.Windows
	filter    concurrency.Filter
	byVariant bool
	// unimplemented is a slice_by that the vendor's interface names but this service does
	// not compute (501 once the query is otherwise valid).
	unimplemented string
}

// parseConcurrencyQuery reads and checks every parameter; every problem is
// one field error of a 400.
func parseConcurrencyQuery(q url.Values) (concurrencyQuery, error) {
	var out concurrencyQuery
	var errs []voiceops.FieldError
	fail := func(field, msg string) { errs = append(errs, voiceops.FieldError{Field: field, Message: msg}) }
	// get returns a parameter given once; given more than once is an error.
	get := func(name string) (string, bool) {
		vs, ok := q[name]
		if !ok {
			return "", false
		}
		if len(vs) > 1 {
			fail(name, "must be given once")
			return "", false
		}
		return vs[0], true
	}
	timeParam := func(name string) (time.Time, bool) {
		v, ok := get(name)
		if !ok {
			if _, given := q[name]; !given {
				fail(name, "is required")
			}
			return time.Time{}, false
		}
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			fail(name, "must be an RFC 3339 date-time, such as 2026-11-22T14:00:00Z")
			return time.Time{}, false
		}
		if t.Before(minSeriesTime) || !t.Before(maxSeriesTime) {
			fail(name, "must be from 1970 to 2199")
			return time.Time{}, false
		}
		return t, true
	}
	start, okStart := timeParam("start_time")
	end, okEnd := timeParam("end_time")
	if okStart && okEnd {
		switch {
		case !start.Before(end):
			fail("end_time", "must be after start_time")
		case end.Sub(start) > concurrency.MaxRange:
			fail("end_time", "must be at most one week (168h) after start_time")
		default:
			out.windows = concurrency.Round(start, end)
		}
	}

	out.filter.Environment = voiceops.EnvLive
	if v, ok := get("client_env"); ok {
		env, valid := voiceops.ParseEnum(v, voiceops.Environments)
		if !valid {
			fail("client_env", voiceops.OneOf(voiceops.Environments))
		}
		out.filter.Environment = env
	}
	nonEmpty := func(name string) string {
		v, ok := get(name)
		if ok && v == "" {
			fail(name, "must not be empty")
		}
		return v
	}
	out.filter.VariantID = nonEmpty("variant_id")
	out.filter.VariantName = nonEmpty("variant_name")
	if out.filter.VariantID != "" && out.filter.VariantName != "" {
		fail("variant_name", "only one of variant_id and variant_name may be given")
	}
	if v := nonEmpty("language"); v != "" {
		if !voiceops.ValidLanguageCode(v) {
			fail("language", "must be a language code, such as en or en-GB")
		}
		out.filter.Language = v
	}
	if v := nonEmpty("phone_number"); v != "" {
		// A "+" sent unencoded in a query string reads as a space:
		// NormalizeNumber takes spaces for separators, so it still works.
		n := concurrency.NormalizeNumber(v)
		if !voiceops.ValidE164(n) {
			fail("phone_number", "must be a phone number in E.164 form, such as +14155550100")
		}
		out.filter.PhoneNumber = n
	}
	if v, ok := get("slice_by"); ok {
		switch v {
		case "variant":
			out.byVariant = true
		case "language", "phone_number":
			out.unimplemented = v
		default:
			fail("slice_by", "must be variant (language and phone_number are not implemented)")
		}
	}
	if len(errs) > 0 {
		return out, &voiceops.Error{Kind: voiceops.KindBadRequest, Message: "invalid query parameter", Fields: errs}
	}
	return out, nil
}

type concurrencyJSON struct {
	AccountID string                    `json:"account_id"`
	ProjectID string                    `json:"project_id"`
	Intervals []concurrencyIntervalJSON `json:"intervals"`
}

type concurrencyIntervalJSON struct {
	Time                       string  `json:"time"`
	MaxConcurrentConversations int     `json:"max_concurrent_conversations"`
	VariantID                  *string `json:"variant_id,omitempty"`
	VariantName                *string `json:"variant_name,omitempty"`
}

// concurrency answers the series: the conversations that may count (those
// that started from concurrency.MaxConversationLength before the rounded
// range to its end) are read with the store's narrow projection, page by
// page, into a counter that keeps only their intervals.
func (g *Concurrency) concurrency(w http.ResponseWriter, r *http.Request, t httpapi.Caller) error {
	q, err := parseConcurrencyQuery(r.URL.Query())
	if err != nil {
		return err
	}
	if q.unimplemented != "" {
		return voiceops.Errorf(voiceops.KindUnimplemented, "slice_by=%s is not implemented; slice_by=variant is", q.unimplemented)
	}
	now := g.Now()
	var counter seriesCounter
	if g.newCounter != nil {
		counter = g.newCounter(q.windows, q.filter, q.byVariant, now)
	} else {
		counter = concurrency.NewCounter(q.windows, q.filter, q.byVariant, now)
	}
	from, to := concurrency.ReadFrom(q.windows), q.windows.End()
	for after := ""; ; {
		page, err := g.Store.ListConversationIntervals(r.Context(), t.AccountID, t.ProjectID, from, to, after, concurrencyPage)
		if err != nil {
			return err
		}
		for i, c := range page {
			// An idle conversation not swept yet ended at its due.
			page[i] = c.AsOf(now)
		}
		counter.Add(page...)
		if len(page) < concurrencyPage {
			break
		}
		after = page[len(page)-1].ID
	}

	series := counter.Series()
	out := concurrencyJSON{AccountID: t.AccountID, ProjectID: t.ProjectID,
		Intervals: make([]concurrencyIntervalJSON, 0, q.windows.N*len(series))}
	for k := range q.windows.N {
		at := httpapi.Time(q.windows.Start(k))
		for i := range series {
			item := concurrencyIntervalJSON{Time: at, MaxConcurrentConversations: series[i].Max[k]}
			if q.byVariant {
				item.VariantID, item.VariantName = &series[i].VariantID, &series[i].VariantName
			}
			out.Intervals = append(out.Intervals, item)
		}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		return voiceops.Internal(err)
	}
	if buf.Len() > maxConcurrencyBytes {
		return voiceops.Errorf(voiceops.KindBadRequest,
			"the series would be larger than %d MiB (%d variants over %d intervals): ask for a shorter range, or filter by variant instead of slicing by it",
			maxConcurrencyBytes>>20, len(series), q.windows.N)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(buf.Bytes())
	return nil
}
