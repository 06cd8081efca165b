package apifixture

import (
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/ops/provision"
	"github.com/voiceops/opsapi/shared/store/memory"
	"github.com/voiceops/opsapi/shared/voiceops"
)

func TestProvisionMakesEveryKey(t *testing.T) {
	stores := memory.New().Stores()
	k := Provision(t, provision.Provisioner{Accounts: stores.Accounts, Region: voiceops.RegionUS, Now: func() time.Time { return Start }})
	all := []string{k.A, k.B, k.Proj, k.Proj2, k.Agent, k.Agent2, k.Service, k.Service2}
	slices.Sort(all)
	if all[0] == "" || len(slices.Compact(all)) != 8 {
		t.Errorf("keys %+v: want 8 distinct keys", k)
	}
}

// TestDoSendsTheRequest: the body as given or as JSON, the key, the
// headers after it, and a Content-Type only with a body.
func TestDoSendsTheRequest(t *testing.T) {
	type seen struct{ ContentType, Key, Body string }
	echo := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("X-Request-Id", "req_1")
		_ = json.NewEncoder(w).Encode(seen{r.Header.Get("Content-Type"), r.Header.Get("x-api-key"), string(b)})
	})
	jsonCT := map[string]string{"Content-Type": "application/json"}
	for _, c := range []struct {
		name    string
		body    any
		headers map[string]string
		want    seen
	}{
		{"no body", nil, jsonCT, seen{Key: "k"}},
		{"verbatim", `{"a":`, jsonCT, seen{"application/json", "k", `{"a":`}},
		{"as JSON", map[string]int{"a": 1}, jsonCT, seen{"application/json", "k", `{"a":1}`}},
		{"a header replaces the key", nil, map[string]string{"x-api-key": "other"}, seen{Key: "other"}},
	} {
		res := Do(t, echo, false, "POST", "/v1/x", "k", c.body, c.headers).Expect(t, 200)
		got := res.JSON(t)
		if got["ContentType"] != c.want.ContentType || got["Key"] != c.want.Key || got["Body"] != c.want.Body {
			t.Errorf("%s: the handler saw %v, want %+v", c.name, got, c.want)
		}
	}
}
