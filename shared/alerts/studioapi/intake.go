package studioapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/voiceops/opsapi/shared/metrics"
	"github.com/voiceops/opsapi/shared/platform/httpapi"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// The intake lists the route of the internal metric intake
// (docs/api.md, "Metric intake"), on the studio host.
// Outside producers (the telephony and the agent runtime) report what the
// product's own functions cannot see:
//
//	POST /internal/v1/metric-events
//	X-Internal-Key: <the region's internal key>
//	{"events": [{"account_id": "...", "project_id": "..." | null,
//	             "metric": "...", "value": n, "at": "RFC 3339"}]}
//
// The rules, beyond docs/api.md:
//   - A missing or wrong X-Internal-Key is 401; so is every request when no
//     key is configured. Only the key's SHA-256 digest is held.
//   - "events" holds 0 to 1000 events (an empty batch is 202 with
//     {"accepted": 0}); more is 422 on "events". The body is at most 1 MiB
//     (413).
//   - account_id and project_id must have the shape of IDs (1 to 64 letters,
//     digits, "_" or "-") but are not looked up: the producers are trusted,
//     and an event for an unknown scope is recorded and never read.
//   - metric: a kind of voiceops' table (metric.go). value, as the kind's
//     value type says: for a latency (turn_latency) a required JSON number
//     of milliseconds, 0 to 86400000 (one day); for a count (api_errors,
//     ...) an optional JSON integer literal, 0 to 2147483647, default 1;
//     for activity it is ignored, whatever it is.
//   - at: optional RFC 3339 time, default the time of receipt; at most 2
//     hours old and at most 1 minute ahead of the receiver's clock.
//   - Unknown fields, top level or in an event, are 422; null is accepted
//     only for project_id.
//   - Any invalid event rejects the whole batch: 422 in the studio host's error shape,
//     one entry per problem, fields named like "events[3].metric", and
//     nothing is recorded. 202 {"accepted": N} means all N events are
//     stored (recording is synchronous); a store failure is 500 and
//     nothing is acknowledged.
//
// Intake is that group (functions/intake).
type Intake struct {
	Metrics Recorder
	Now     func() time.Time
}

// Recorder stores metric events (shared/metrics/buckets.Recorder).
type Recorder interface {
	Record(ctx context.Context, events ...metrics.Event) error
}

// Routes lists the intake's one route.
func (in *Intake) Routes() []httpapi.Route {
	return []httpapi.Route{{Method: "POST", Path: "/internal/v1/metric-events", Family: httpapi.StudioErrors, Auth: httpapi.InternalKey, Handle: in.postMetricEvents}}
}

type acceptedJSON struct {
	Accepted int `json:"accepted"`
}

func (in *Intake) postMetricEvents(w http.ResponseWriter, r *http.Request, _ httpapi.Caller) error {
	if in.Metrics == nil {
		return voiceops.Internal(errors.New("metric intake: no metric store"))
	}
	o, err := httpapi.ReadObject(w, r, false)
	if err != nil {
		return err
	}
	now := in.Now()
	var events []metrics.Event
	if raw, ok := o.Take("events", true, false); ok {
		events = readMetricEvents(o, raw, now)
	}
	if err := o.Done(); err != nil {
		return err
	}
	if err := in.Metrics.Record(r.Context(), events...); err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusAccepted, acceptedJSON{Accepted: len(events)})
	return nil
}

// readMetricEvents reads the "events" array, reporting every problem on o
// with the event's index in the field name.
func readMetricEvents(o *httpapi.Object, raw json.RawMessage, now time.Time) []metrics.Event {
	var elems []json.RawMessage
	if raw[0] != '[' || json.Unmarshal(raw, &elems) != nil {
		o.Fail("events", "must be an array of event objects")
		return nil
	}
	if len(elems) > metrics.MaxBatch {
		o.Fail("events", fmt.Sprintf("must hold at most %d events; send more in further requests", metrics.MaxBatch))
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
			o.Fail(field, f.Message)
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
		if !httpapi.IsIntegerLiteral(raw) || err != nil {
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
	o, err := httpapi.ParseObject(raw)
	if err != nil {
		return metrics.Event{}, []voiceops.FieldError{{Message: "must be an event object"}}
	}
	e := metrics.Event{At: now}
	if id, ok := o.Str("account_id", true); ok {
		e.AccountID = id
	}
	if pid, ok := o.NullableStr("project_id"); ok && *pid != nil {
		e.ProjectID = **pid
	}
	if v, ok := o.Str("metric", true); ok {
		e.Kind = metrics.Kind(v)
	}
	// The kind's value (voiceops' table) says what "value" must be.
	switch v := e.Kind.Value(); v {
	case voiceops.ValueCount, voiceops.ValueLatency:
		if v == voiceops.ValueCount {
			e.Value = 1 // the default count
		}
		if raw, ok := o.Take("value", v == voiceops.ValueLatency, false); ok {
			e.Value = metricValue(raw, v == voiceops.ValueCount)
		}
	default: // activity ignores its value; an unknown metric is reported below
		o.Has("value")
	}
	if v, ok := o.Str("at", false); ok {
		at, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			o.Fail("at", "must be an RFC 3339 date-time, such as 2026-11-22T14:00:00.000Z")
		} else {
			e.At = at
		}
	}
	undecoded := map[string]bool{}
	for _, f := range o.Errors() {
		undecoded[f.Field] = true
	}
	for _, p := range e.Problems(now) {
		if !undecoded[p.Field] {
			o.Fail(p.Field, p.Message)
		}
	}
	o.SortErrors(metricEventFields)
	var ve *voiceops.Error
	if errors.As(o.Done(), &ve) {
		return e, ve.Fields
	}
	return e, nil
}
