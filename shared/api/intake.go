package api

import (
	"cmp"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/voiceops/opsapi/shared/metrics"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// intakeRoutes lists the route of the internal metric intake
// (DECISIONS.md, "Metric events (internal intake)"), on the studio host.
// Outside producers (the telephony and the agent runtime) report what the
// product's own functions cannot see:
//
//	POST /internal/v1/metric-events
//	X-Internal-Key: <the region's internal key>
//	{"events": [{"account_id": "...", "project_id": "..." | null,
//	             "metric": "...", "value": n, "at": "RFC 3339"}]}
//
// The rules, beyond DECISIONS.md:
//   - A missing or wrong X-Internal-Key is 401; so is every request when no
//     key is configured. Only the key's SHA-256 digest is held.
//   - "events" holds 0 to 1000 events (an empty batch is 202 with
//     {"accepted": 0}); more is 422 on "events". The body is at most 1 MiB
//     (413).
//   - account_id and project_id must have the shape of IDs (1 to 64 letters,
//     digits, "_" or "-") but are not looked up: the producers are trusted,
//     and an event for an unknown scope is recorded and never read.
//   - metric: turn_latency, api_errors, function_errors, call_crashes,
//     call_volume or activity. value: for turn_latency a required JSON
//     number of milliseconds, 0 to 86400000 (one day); for the counts an
//     optional JSON integer literal, 0 to 2147483647, default 1; for
//     activity it is ignored, whatever it is.
//   - at: optional RFC 3339 time, default the time of receipt; at most 2
//     hours old and at most 1 minute ahead of the receiver's clock.
//   - Unknown fields, top level or in an event, are 422; null is accepted
//     only for project_id.
//   - Any invalid event rejects the whole batch: 422 in doc 1's error shape,
//     one entry per problem, fields named like "events[3].metric", and
//     nothing is recorded. 202 {"accepted": N} means all N events are
//     stored (recording is synchronous); a store failure is 500 and
//     nothing is acknowledged.
func intakeRoutes(s *server, mux *http.ServeMux) {
	mux.Handle("POST /internal/v1/metric-events", s.internal(s.postMetricEvents))
}

// internalFunc is a handler of an internal route: it runs once the
// internal key is checked and returns errors for writeError to answer.
type internalFunc func(w http.ResponseWriter, r *http.Request) error

var errInternalKey = voiceops.Errorf(voiceops.KindUnauthorized, "missing or invalid X-Internal-Key")

// internal checks X-Internal-Key against Deps.InternalKeyDigest in
// constant time and answers any error in doc 1's shape.
func (s *server) internal(h internalFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		err := s.checkInternalKey(r.Header.Get("X-Internal-Key"))
		if err == nil {
			err = h(w, r)
		}
		if err != nil {
			writeError(w, r, s.Log, doc1, err)
		}
	})
}

func (s *server) checkInternalKey(key string) error {
	want, err := hex.DecodeString(s.InternalKeyDigest)
	if key == "" || err != nil || len(want) != sha256.Size {
		return errInternalKey
	}
	got := sha256.Sum256([]byte(key))
	if subtle.ConstantTimeCompare(got[:], want) != 1 {
		return errInternalKey
	}
	return nil
}

type acceptedJSON struct {
	Accepted int `json:"accepted"`
}

func (s *server) postMetricEvents(w http.ResponseWriter, r *http.Request) error {
	if s.Metrics == nil {
		return voiceops.Internal(errors.New("metric intake: no metric store (Deps.Metrics)"))
	}
	o, err := readObject(w, r, false)
	if err != nil {
		return err
	}
	now := s.Now()
	var events []metrics.Event
	if raw, ok := o.take("events", true, false); ok {
		events = readMetricEvents(o, raw, now)
	}
	if err := o.done(); err != nil {
		return err
	}
	if err := s.Metrics.Record(r.Context(), events...); err != nil {
		return err
	}
	writeJSON(w, http.StatusAccepted, acceptedJSON{Accepted: len(events)})
	return nil
}

// readMetricEvents reads the "events" array, reporting every problem on o
// with the event's index in the field name.
func readMetricEvents(o *object, raw json.RawMessage, now time.Time) []metrics.Event {
	var elems []json.RawMessage
	if raw[0] != '[' || json.Unmarshal(raw, &elems) != nil {
		o.fail("events", "must be an array of event objects")
		return nil
	}
	if len(elems) > metrics.MaxBatch {
		o.fail("events", fmt.Sprintf("must hold at most %d events; send more in further requests", metrics.MaxBatch))
		return nil
	}
	events := make([]metrics.Event, 0, len(elems))
	for i, el := range elems {
		e, errs := readMetricEvent(el, now)
		for _, f := range errs {
			field := fmt.Sprintf("events[%d]", i)
			if f.Field != "" {
				field += "." + f.Field
			}
			o.fail(field, f.Message)
		}
		events = append(events, e)
	}
	return events
}

// metricValue reads the value of an event: a JSON number, an integer
// literal for a count (1.5, "5" and 1e3 are not). Anything else reads as
// NaN, which metrics.Event.Problems refuses with the kind's rule.
func metricValue(raw json.RawMessage, count bool) float64 {
	if count {
		v, err := strconv.ParseInt(string(raw), 10, 64)
		if !isIntegerLiteral(raw) || err != nil {
			return math.NaN()
		}
		return float64(v)
	}
	var v float64
	if raw[0] == '"' || json.Unmarshal(raw, &v) != nil {
		return math.NaN()
	}
	return v
}

// metricEventFields are the fields of an event, in the order their problems
// are reported.
var metricEventFields = []string{"account_id", "project_id", "metric", "value", "at"}

// readMetricEvent reads one event; the field errors name its own fields
// ("" for the event itself). It checks the JSON types here and the rest
// with metrics.Event.Problems, for the fields that decoded.
func readMetricEvent(raw json.RawMessage, now time.Time) (metrics.Event, []voiceops.FieldError) {
	var fields map[string]json.RawMessage
	if raw[0] != '{' || json.Unmarshal(raw, &fields) != nil {
		return metrics.Event{}, []voiceops.FieldError{{Message: "must be an event object"}}
	}
	o := &object{fields: fields, used: map[string]bool{}}
	e := metrics.Event{At: now}
	if id, ok := o.str("account_id", true); ok {
		e.AccountID = id
	}
	if pid, ok := o.nullableStr("project_id"); ok && *pid != nil {
		e.ProjectID = **pid
	}
	if v, ok := o.str("metric", true); ok {
		e.Kind = metrics.Kind(v)
	}
	if e.Kind == metrics.TurnLatency || e.Kind.IsCount() {
		if e.Kind.IsCount() {
			e.Value = 1 // the default count
		}
		if raw, ok := o.take("value", e.Kind == metrics.TurnLatency, false); ok {
			e.Value = metricValue(raw, e.Kind.IsCount())
		}
	} else { // activity ignores its value; an unknown metric is reported below
		o.used["value"] = true
	}
	if v, ok := o.str("at", false); ok {
		at, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			o.fail("at", "must be an RFC 3339 date-time, such as 2026-11-22T14:00:00.000Z")
		} else {
			e.At = at
		}
	}
	undecoded := map[string]bool{}
	for _, f := range o.errs {
		undecoded[f.Field] = true
	}
	for _, p := range e.Problems(now) {
		if !undecoded[p.Field] {
			o.fail(p.Field, p.Message)
		}
	}
	slices.SortStableFunc(o.errs, func(a, b voiceops.FieldError) int {
		return cmp.Compare(slices.Index(metricEventFields, a.Field), slices.Index(metricEventFields, b.Field))
	})
	var ve *voiceops.Error
	if errors.As(o.done(), &ve) {
		return e, ve.Fields
	}
	return e, nil
}
