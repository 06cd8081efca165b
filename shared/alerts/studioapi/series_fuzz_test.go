package studioapi

import (
	"errors"
	"net/url"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/metrics/series"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// FuzzSeriesQuery: any query of GET /v1/metrics is either a 400 naming
// the parameters at fault, or a range the reader can answer cheaply:
// whole steps, from before to, at most series.MaxPoints points, to at most
// one step after now.
func FuzzSeriesQuery(f *testing.F) {
	for _, s := range []string{
		"metric=api_errors",
		"metric=api_errors&from=2026-11-21T10:00:00Z&to=2026-11-22T10:00:00Z&step=1m",
		"metric=api_errors&to=2030-11-22T10:00:00Z&step=1d",
		"metric=turn_latency_p95&project_id=proj_a&step=6h&from=2026-10-25T00:00:00%2B02:00",
		"metric=cpu&scope=x&to=yesterday",
		"metric=api_errors&to=2026-11-22T10:00:00Z&to=2026-11-23T10:00:00Z",
	} {
		f.Add(s)
	}
	now := time.Date(2026, 11, 22, 10, 17, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, raw string) {
		v, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		q, _, err := seriesQuery(v, now)
		if err != nil {
			var e *voiceops.Error
			if !errors.As(err, &e) || e.Kind != voiceops.KindBadRequest || len(e.Fields) == 0 {
				t.Fatalf("%q: %v, want a 400 naming a parameter", raw, err)
			}
			return
		}
		_, latest := series.Align(now, now.Add(q.Step), q.Step)
		switch {
		case q.Step <= 0 || !q.From.Before(q.To):
			t.Fatalf("%q: range %v..%v step %v", raw, q.From, q.To, q.Step)
		case !q.From.Equal(q.From.Truncate(q.Step)) || !q.To.Equal(q.To.Truncate(q.Step)):
			t.Fatalf("%q: %v..%v not whole steps of %v", raw, q.From, q.To, q.Step)
		case int(q.To.Sub(q.From)/q.Step) > series.MaxPoints:
			t.Fatalf("%q: %d points", raw, int(q.To.Sub(q.From)/q.Step))
		case q.To.After(latest):
			t.Fatalf("%q: to %v is past %v", raw, q.To, latest)
		}
	})
}
