package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestHardeningEndToEnd replays the adversarial suite's HTTP findings against the dev
// server, embedded and on DynamoDB (moto): none of them is found.
func TestHardeningEndToEnd(t *testing.T) {
	t.Run("embedded", func(t *testing.T) {
		creds, stop := startDev(t)
		defer func() { _ = stop() }()
		hardeningFindings(t, creds)
	})
	t.Run("moto", func(t *testing.T) {
		creds, stop, ok := startDevOnMoto(t, "-eval-every", "1h")
		if !ok {
			return
		}
		defer func() { _ = stop() }()
		hardeningFindings(t, creds)
	})
}

func hardeningFindings(t *testing.T, creds Credentials) {
	acct := creds.Accounts[0]
	proj := acct.Projects[0]
	call := func(method, base, path string, headers map[string]string, body string) (int, map[string]any) {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		for k, v := range headers {
			req.Header[k] = []string{v} // as sent, empty values included
		}
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var out map[string]any
		_ = json.NewDecoder(res.Body).Decode(&out)
		return res.StatusCode, out
	}
	trigger := func(body string, hdr map[string]string) (int, string) {
		t.Helper()
		h := map[string]string{"X-Service-Auth-Token": proj.ServiceAuthToken}
		for k, v := range hdr {
			h[k] = v
		}
		st, out := call("POST", creds.BaseURL, "/v1/outbound-calling/trigger", h, body)
		msg, _ := out["error_message"].(string)
		return st, msg
	}
	// 4: toll-fraud destinations are refused by the default policy (us).
	for _, n := range []string{"+19005550123", "+449090901234", "+449012345678", "+448702345678", "+447012345678", "+881612345678"} {
		if st, msg := trigger(`{"to_number":"`+n+`"}`, nil); st != 400 || !strings.HasPrefix(msg, "destination refused") {
			t.Errorf("4: %s: %d %q", n, st, msg)
		}
	}
	// 5: an empty Idempotency-Key.
	if st, msg := trigger(`{"to_number":"+14155550100"}`, map[string]string{"Idempotency-Key": ""}); st != 400 || !strings.Contains(msg, "Idempotency-Key") {
		t.Errorf("5: %d %q", st, msg)
	}
	if st, out := call("POST", creds.AgentStudioURL, "/v1/alert-rules", map[string]string{"X-Api-Key": acct.APIKey, "Idempotency-Key": ""},
		`{"name":"x","metric":"api_errors","operator":">","threshold_value":1,"window_duration":"5m"}`); st != 400 || out["errors"] == nil {
		t.Errorf("5, studio: %d %v", st, out)
	}
	// 6: country codes that are no country.
	for _, cc := range []string{"XX", "ZZ"} {
		if st, msg := trigger(`{"to_number":"+14155550100","country_code":"`+cc+`"}`, nil); st != 400 || !strings.Contains(msg, "country_code") {
			t.Errorf("6: %s: %d %q", cc, st, msg)
		}
	}
	// 7: repeated keys.
	if st, msg := trigger(`{"to_number":"+14155550001","to_number":"+14155550100"}`, nil); st != 400 || !strings.Contains(msg, "repeats an object key") {
		t.Errorf("7: %d %q", st, msg)
	}
	// 8: bridge-ended before a handoff, with impossible durations, twice.
	chat := map[string]string{"X-API-KEY": proj.APIKey, "X-TOKEN": proj.AgentToken}
	chatPath := "/v1/" + acct.AccountID + "/" + proj.ProjectID + "/chat/"
	_, created := call("POST", creds.BaseURL, chatPath+"create", chat, `{}`)
	conv, _ := created["conversation_id"].(string)
	events := map[string]string{"X-Api-Key": proj.EventsKey}
	bridge := func(b, c int) (int, string) {
		st, out := call("POST", creds.BaseURL, "/internal/v1/agentic-dial/bridge-ended", events,
			fmt.Sprintf(`{"conversation_id":%q,"bridge_duration_seconds":%d,"call_duration_seconds":%d}`, conv, b, c))
		msg, _ := out["error_message"].(string)
		return st, msg
	}
	if st, msg := bridge(0, 0); st != 409 || !strings.Contains(msg, "not handed off") {
		t.Errorf("8, before the handoff: %d %q", st, msg)
	}
	if st, out := call("POST", creds.BaseURL, chatPath+"respond", chat, `{"conversation_id":"`+conv+`","message":"I want a human"}`); st != 200 || out["handoff"] == nil {
		t.Fatalf("handoff: %d %v", st, out)
	}
	if st, msg := bridge(99, 1); st != 400 || !strings.Contains(msg, "bridge_duration_seconds") {
		t.Errorf("8, 99 s on a 1 s call: %d %q", st, msg)
	}
	if st, msg := bridge(0, 1); st != 200 {
		t.Errorf("8, first: %d %q", st, msg)
	}
	if st, msg := bridge(0, 1); st != 409 || !strings.Contains(msg, "already recorded") {
		t.Errorf("8, again: %d %q", st, msg)
	}
	// 9: non-canonical paths get the API's JSON 404, not the 307 of a
	// ServeMux that cleans them.
	u, _ := url.Parse(creds.BaseURL)
	for _, p := range []string{"//openapi.json", "/v1/../openapi.json", "//v1/alert-rules"} {
		conn, err := net.Dial("tcp", u.Host)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", p, u.Host)
		res, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		conn.Close()
		if res.StatusCode != 404 || res.Header.Get("X-Request-Id") == "" || !strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
			t.Errorf("9: %s: %d %v", p, res.StatusCode, res.Header)
		}
	}
}
