package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/voiceops/opsapi/shared/platform/keys"
)

// opsctlBuildFlags are go build's flags for opsctl (race_test.go).
var opsctlBuildFlags []string

// opsctl works on the in-memory dev server through its operator endpoint:
// the very binary an operator runs, with -credentials.
func TestOpsctlAgainstTheDevServer(t *testing.T) {
	dir := t.TempDir()
	creds := filepath.Join(dir, "creds.json")
	c, stopDev := startDev(t, "-credentials", creds)
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			_ = stopDev()
		}
	}
	defer stop()
	_, here, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(here), "..", "..")
	bin := filepath.Join(dir, "opsctl")
	build := append(append([]string{"build"}, opsctlBuildFlags...), "-o", bin, filepath.Join(root, "scripts", "opsctl"))
	if out, err := exec.Command("go", build...).CombinedOutput(); err != nil {
		t.Fatalf("building opsctl: %v\n%s", err, out)
	}
	opsctl := func(args ...string) (string, error) {
		cmd := exec.Command(bin, append([]string{"-credentials", creds}, args...)...)
		// No AWS at all: the dev server is reached over HTTP only.
		cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		return out.String() + errOut.String(), err
	}
	must := func(args ...string) string {
		t.Helper()
		out, err := opsctl(args...)
		if err != nil {
			t.Fatalf("opsctl %v: %v\n%s", args, err, out)
		}
		return out
	}
	acct := c.Accounts[0].AccountID
	proj := c.Accounts[0].Projects[0].ProjectID

	// Keys: a key made by opsctl authenticates on the server.
	secret := strings.Fields(must("key", "create", "-kind", "api", "-account", acct))[0]
	if st := get(t, c.AgentStudioURL+"/v1/alert-rules", "x-api-key", secret); st != 200 {
		t.Fatalf("a key opsctl created: %d", st)
	}
	if list := must("key", "list", "-account", acct); !strings.Contains(list, keys.Prefix(secret)) || strings.Contains(list, secret) {
		t.Errorf("key list:\n%s", list)
	}
	must("key", "revoke", "-account", acct, "-key", keys.Prefix(secret))
	// (The server's key cache keeps it valid for up to 5 s; the store has
	// it revoked at once.)
	for _, line := range strings.Split(must("key", "list", "-account", acct), "\n") {
		if f := strings.Fields(line); strings.Contains(line, keys.Prefix(secret)) && f[len(f)-1] == "-" {
			t.Errorf("not revoked: %s", line)
		}
	}

	// Destination policies.
	if out := must("destinations", "set", "-account", acct, "-countries", "US,GB", "-allow", "premium_rate"); !strings.Contains(out, "countries: GB, US") ||
		!strings.Contains(out, "set by the operator") {
		t.Errorf("destinations set:\n%s", out)
	}
	if out := must("destinations", "show", "-account", acct); !strings.Contains(out, "allowed types refused by default: premium_rate") {
		t.Errorf("destinations show:\n%s", out)
	}
	if out, err := opsctl("destinations", "set", "-account", acct, "-countries", "ZZ"); err == nil || !strings.Contains(out, "nothing was stored") {
		t.Errorf("a bad country: %v %s", err, out)
	}

	// Agent configurations, DNI pools, limits, outbound rates, accounts.
	if out := must("agent", "load", "-account", acct, "-project", proj, "-file", filepath.Join(root, "docs", "examples", "agent.json")); !strings.Contains(out, "Demo IVR") {
		t.Errorf("agent load:\n%s", out)
	}
	if out := must("agent", "show", "-account", acct, "-project", proj); !strings.Contains(out, `"retention_days": 90`) {
		t.Errorf("agent show:\n%s", out)
	}
	if out := must("dni", "add", "-account", acct, "-project", proj, "-numbers", "+14155550100,+14155550101"); !strings.Contains(out, "2 more or updated numbers") {
		t.Errorf("dni add:\n%s", out)
	}
	if out, err := opsctl("dni", "add", "-account", acct, "-project", proj, "-numbers", "555"); err == nil || !strings.Contains(out, "nothing was stored") {
		t.Errorf("dni add of a bad number: %v %s", err, out)
	}
	must("limit", "set", "-account", acct, "-rate", "5", "-burst", "10")
	if out := must("limit", "show", "-account", acct); !strings.Contains(out, "5 requests a second, bursts of 10, per API key (override)") {
		t.Errorf("limit show:\n%s", out)
	}
	if out := must("outbound", "rate", "-account", acct, "-per-second", "2"); !strings.Contains(out, "at most 2 new calls per second") {
		t.Errorf("outbound rate:\n%s", out)
	}
	must("account", "create", "-name", "Acme", "-id", "acct_acme")
	must("project", "create", "-account", "acct_acme", "-name", "IVR", "-id", "proj_ivr")
	if out := must("project", "list", "-account", "acct_acme"); !strings.Contains(out, "proj_ivr") {
		t.Errorf("project list:\n%s", out)
	}

	// Errors name the fix.
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"key", "create", "-kind", "api", "-account", "acct_nope"}, "no such account acct_nope"},
		{[]string{"account", "create", "-name", "Acme", "-id", "acct_acme"}, "already exists"},
		{[]string{"destinations", "show", "-account", "acct_nope"}, "no such account acct_nope"},
		{[]string{"twilio", "show", "-account", acct}, "TWILIO_ACCOUNT_SID"},
		{[]string{"-region", "eu", "account", "list"}, "serves region us: drop -region"},
	} {
		out, err := opsctl(tc.args...)
		if err == nil || !strings.Contains(out, tc.want) {
			t.Errorf("opsctl %v: %v %q, want an error with %q", tc.args, err, out, tc.want)
		}
	}
	// A credentials file of another server: the key is refused.
	other := filepath.Join(dir, "other.json")
	b, _ := os.ReadFile(creds)
	_ = os.WriteFile(other, bytes.Replace(b, []byte(c.InternalKey), []byte(keys.New(keys.KindInternal, "us")), 1), 0o600)
	if out, err := exec.Command(bin, "-credentials", other, "account", "list").CombinedOutput(); err == nil || !strings.Contains(string(out), "refused the internal_key") {
		t.Errorf("a wrong internal key: %v %s", err, out)
	}
	stop()
	if out, err := opsctl("account", "list"); err == nil || !strings.Contains(out, "start the dev server") {
		t.Errorf("a stopped server: %v %s", err, out)
	}
	if out, err := exec.Command(bin, "-credentials", filepath.Join(dir, "none.json"), "account", "list").CombinedOutput(); err == nil || !strings.Contains(string(out), "go run ./scripts/dev -credentials") {
		t.Errorf("a missing credentials file: %v %s", err, out)
	}
}

// The operator endpoint refuses a caller that is not on loopback, key or
// not, and does not hand the request to the API.
func TestOperatorEndpointRefusesNonLoopback(t *testing.T) {
	c, stop := startDev(t)
	defer stop()
	// No store is reached: the refusal comes first.
	h := withOperator(backend{}, keys.Digest(c.InternalKey), http.NotFoundHandler())
	for _, remote := range []string{"192.0.2.7:4000", "[2001:db8::1]:4000", "10.0.0.1:80"} {
		r := httptest.NewRequest(http.MethodPost, "/_dev/operator/ListAccounts", strings.NewReader(`{}`))
		r.RemoteAddr = remote
		r.Header.Set("X-Internal-Key", c.InternalKey)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusForbidden || !strings.Contains(w.Body.String(), "loopback") {
			t.Errorf("from %s: %d %s", remote, w.Code, w.Body)
		}
	}
	// From loopback without the key: 401 on the real server.
	req, _ := http.NewRequest(http.MethodPost, c.AgentStudioURL+"/_dev/operator/ListAccounts", strings.NewReader(`{}`))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("without the key: %d, want 401", resp.StatusCode)
	}
}
