package catalogtest

import (
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/voiceops/opsapi/shared/platform/catalog"
	"github.com/voiceops/opsapi/shared/platform/httpapi"
)

// errs is a TB that keeps what it is told.
type errs []string

func (e *errs) Helper()                        {}
func (e *errs) Errorf(format string, a ...any) { *e = append(*e, fmt.Sprintf(format, a...)) }
func (e *errs) Fatalf(format string, a ...any) { e.Errorf(format, a...) }

// serving is a handler of the given catalog routes (handlers that answer
// 204) with its request metrics in rec.
func serving(rec *Routes, routes ...catalog.Route) http.Handler {
	var rs []httpapi.Route
	for _, r := range routes {
		rs = append(rs, httpapi.Route{Method: r.Method, Path: r.Path, Family: httpapi.BaseErrors, Auth: httpapi.Public,
			Handle: func(w http.ResponseWriter, _ *http.Request, _ httpapi.Caller) error { w.WriteHeader(204); return nil }})
	}
	return httpapi.New(httpapi.Config{Metrics: rec, Log: slog.New(slog.DiscardHandler)}, rs)
}

func TestServesHTTP(t *testing.T) {
	chat := catalog.Chat.Routes
	for _, c := range []struct {
		name   string
		served []catalog.Route
		want   string // in the one error; "" for none
	}{
		{"exactly its routes", chat, ""},
		{"a route missing", chat[1:], `served as "unmatched"`},
		{"another group's route", append(append([]catalog.Route{}, chat...), catalog.Handoff.Routes...), "which the catalog does not give it"},
		{"under another pattern", append(append([]catalog.Route{}, chat[1:]...),
			catalog.Route{Method: chat[0].Method, Path: "/{a}/{b}/{c}/chat/{verb}"}), "is served as"},
	} {
		var e errs
		rec := &Routes{}
		ServesHTTP(&e, "chat", chat, serving(rec, c.served...), rec)
		if c.want == "" && len(e) != 0 || c.want != "" && (len(e) != 1 || !strings.Contains(e[0], c.want)) {
			t.Errorf("%s: errors %q, want one with %q", c.name, e, c.want)
		}
	}
}
