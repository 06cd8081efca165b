package operatorapi

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/calls/destination"
	"github.com/voiceops/opsapi/shared/platform/keys"
	"github.com/voiceops/opsapi/shared/platform/ratelimit"
	"github.com/voiceops/opsapi/shared/store/memory"
	"github.com/voiceops/opsapi/shared/voiceops"
)

func serve(t *testing.T) (*memory.Store, *memory.Requests, Stores) {
	t.Helper()
	mem, req := memory.New(), memory.NewRequests()
	key := keys.New(keys.KindInternal, voiceops.RegionUS)
	srv := httptest.NewServer(Handler(Stores{Accounts: mem, Agents: mem.AgentConfigs(), DNI: mem.DNI(), Limits: req,
		Pacer: memory.NewPacer(), Destinations: mem.Destinations()}, keys.Digest(key)))
	t.Cleanup(srv.Close)
	return mem, req, (&Client{BaseURL: srv.URL, InternalKey: key, Source: "creds.json"}).Stores()
}

// The client's stores answer as the served ones do, errors included.
func TestClientReachesTheStores(t *testing.T) {
	ctx := context.Background()
	mem, req, st := serve(t)
	now := time.Now().UTC().Truncate(time.Millisecond)
	if err := st.Accounts.CreateAccount(ctx, voiceops.Account{ID: "acct_a", Name: "A", CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	if err := st.Accounts.CreateAccount(ctx, voiceops.Account{ID: "acct_a", Name: "A", CreatedAt: now}); !errors.Is(err, voiceops.ErrAlreadyExists) {
		t.Errorf("a second create: %v, want ErrAlreadyExists", err)
	}
	if _, err := st.Accounts.GetAccount(ctx, "acct_none"); !errors.Is(err, voiceops.ErrNotFound) {
		t.Errorf("an unknown account: %v, want ErrNotFound", err)
	}
	if a, err := mem.GetAccount(ctx, "acct_a"); err != nil || !a.CreatedAt.Equal(now) {
		t.Errorf("stored %+v %v", a, err)
	}
	if err := st.Accounts.CreateProject(ctx, voiceops.Project{ID: "proj_p", AccountID: "acct_a", Name: "P", CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	k := voiceops.Key{ID: "key_1", Digest: "d1", Prefix: "vo_api_x", Kind: voiceops.KeyAPI, Region: voiceops.RegionUS, AccountID: "acct_a", CreatedAt: now}
	if err := st.Accounts.CreateKey(ctx, k); err != nil {
		t.Fatal(err)
	}
	got, err := st.Accounts.RevokeKey(ctx, "acct_a", "key_1", now)
	if err != nil || got.RevokedAt == nil || !got.RevokedAt.Equal(now) {
		t.Errorf("revoke: %+v %v", got, err)
	}
	if stored, _ := mem.KeyByDigest(ctx, "d1"); stored.RevokedAt == nil {
		t.Error("the revocation did not reach the store")
	}
	if err := st.Agents.PutAgentConfig(ctx, "acct_a", "proj_p", []byte(`{"x":1}`)); err != nil {
		t.Fatal(err)
	}
	if doc, err := st.Agents.GetAgentConfig(ctx, "acct_a", "proj_p"); err != nil || string(doc) != `{"x":1}` {
		t.Errorf("agent config %s %v", doc, err)
	}
	err = st.DNI.AddNumbers(ctx, "acct_a", "proj_p", []string{"555"}, time.Minute)
	var ve *voiceops.Error
	if !errors.As(err, &ve) || ve.Kind != voiceops.KindInvalid || len(ve.Fields) == 0 {
		t.Errorf("a bad number: %#v, want an invalid error with fields", err)
	}
	if err := st.Limits.SetAccountLimit(ctx, "acct_a", &ratelimit.Limit{Rate: 3, Burst: 4}); err != nil {
		t.Fatal(err)
	}
	if l, err := req.AccountLimit(ctx, "acct_a"); err != nil || l != (ratelimit.Limit{Rate: 3, Burst: 4}) {
		t.Errorf("limit %+v %v", l, err)
	}
	p := destination.Policy{Countries: []string{"GB"}}
	if err := st.Destinations.SetDestinationPolicy(ctx, "acct_a", &p); err != nil {
		t.Fatal(err)
	}
	if got, err := st.Destinations.DestinationPolicy(ctx, "acct_a"); err != nil || !reflect.DeepEqual(got, p) {
		t.Errorf("policy %+v %v", got, err)
	}
	if err := st.Pacer.SetRate(ctx, "acct_a", 2); err != nil {
		t.Error(err)
	}
}

func TestRefusals(t *testing.T) {
	key := keys.New(keys.KindInternal, voiceops.RegionUS)
	h := Handler(Stores{Accounts: memory.New()}, keys.Digest(key))
	for _, tc := range []struct {
		remote, key, path string
		status            int
	}{
		{"192.0.2.1:5000", key, Path + "ListAccounts", http.StatusForbidden},
		{"[::ffff:192.0.2.1]:5000", key, Path + "ListAccounts", http.StatusForbidden},
		{"127.0.0.1:5000", "", Path + "ListAccounts", http.StatusUnauthorized},
		{"127.0.0.1:5000", keys.New(keys.KindInternal, voiceops.RegionUS), Path + "ListAccounts", http.StatusUnauthorized},
		{"127.0.0.1:5000", key, Path + "Frobnicate", http.StatusNotFound},
		{"127.0.0.1:5000", key, Path + "%3Cimg%20src=x%20onerror=alert(1)%3E", http.StatusNotFound},
		{"[::1]:5000", key, Path + "ListAccounts", http.StatusOK},
	} {
		r := httptest.NewRequest(http.MethodPost, tc.path, strings.NewReader(`{}`))
		r.RemoteAddr = tc.remote
		if tc.key != "" {
			r.Header.Set(KeyHeader, tc.key)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != tc.status {
			t.Errorf("%s %s: %d %s, want %d", tc.remote, tc.path, w.Code, w.Body, tc.status)
		}
		if strings.ContainsAny(w.Body.String(), "<>") {
			t.Errorf("%s %s: the answer quotes markup back: %s", tc.remote, tc.path, w.Body)
		}
	}
}

// A server that is not the dev server: the error says so.
func TestNotADevServer(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	_, err := (&Client{BaseURL: srv.URL, InternalKey: "k", Source: "creds.json"}).Stores().Accounts.ListAccounts(context.Background())
	if err == nil || !strings.Contains(err.Error(), "only the dev server") {
		t.Errorf("got %v", err)
	}
}
