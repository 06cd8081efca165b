package httpapi_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/platform/httpapi"
	"github.com/voiceops/opsapi/shared/platform/keys"
)

// TestInternalKeySource: the internal key's digest comes from
// Config.InternalKey on each internal request: a matching key passes, a
// wrong one is 401, none configured is 401, and a source that cannot read
// the key is 500 (the secret is unreadable: a failure of ours, logged).
func TestInternalKeySource(t *testing.T) {
	const key = "vo_internal_us_test"
	ok := http.StatusNoContent
	route := httpapi.Route{Method: "POST", Path: "/internal/v1/x", Family: httpapi.StudioErrors, Auth: httpapi.InternalKey,
		Handle: func(w http.ResponseWriter, _ *http.Request, _ httpapi.Caller) error { w.WriteHeader(ok); return nil }}
	failing := func(context.Context) (string, error) { return "", errors.New("AccessDeniedException") }
	for _, c := range []struct {
		name   string
		source func(context.Context) (string, error)
		sent   string
		want   int
	}{
		{"the key", httpapi.FixedDigest(keys.Digest(key)), key, ok},
		{"another key", httpapi.FixedDigest(keys.Digest(key)), key + "x", http.StatusUnauthorized},
		{"no key sent", httpapi.FixedDigest(keys.Digest(key)), "", http.StatusUnauthorized},
		{"no source", nil, key, http.StatusUnauthorized},
		{"an unreadable secret", failing, key, http.StatusInternalServerError},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := httpapi.New(httpapi.Config{InternalKey: c.source, Now: time.Now, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}, []httpapi.Route{route})
			req := httptest.NewRequest("POST", "/internal/v1/x", nil)
			if c.sent != "" {
				req.Header.Set("X-Internal-Key", c.sent)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != c.want {
				t.Errorf("status %d, want %d: %s", rec.Code, c.want, rec.Body)
			}
		})
	}
}
