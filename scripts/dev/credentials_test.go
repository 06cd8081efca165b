package main

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A restart with the same -credentials file keeps every key, so a shell's
// variables keep working; -fresh makes new ones.
func TestRestartKeepsTheKeysOfTheCredentialsFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "creds.json")
	first, stop := startDev(t, "-credentials", path)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	second, stop := startDev(t, "-credentials", path)
	if first.InternalKey != second.InternalKey {
		t.Error("the internal key changed on restart")
	}
	for i, a := range first.Accounts {
		b := second.Accounts[i]
		if a.AccountID != b.AccountID || a.APIKey != b.APIKey {
			t.Errorf("account %d changed: %s %s -> %s %s", i, a.AccountID, a.APIKey[:12], b.AccountID, b.APIKey[:12])
		}
		for j, p := range a.Projects {
			if p != b.Projects[j] {
				t.Errorf("project %s changed on restart", p.ProjectID)
			}
		}
	}
	// The kept keys authenticate on the new server.
	acct := first.Accounts[0]
	if st := get(t, second.AgentStudioURL+"/v1/alert-rules", "x-api-key", acct.APIKey); st != 200 {
		t.Errorf("kept account key: %d", st)
	}
	p := acct.Projects[0]
	if st := get(t, second.BaseURL+"/v3/"+acct.AccountID+"/"+p.ProjectID+"/conversations", "x-api-key", p.APIKey); st != 200 {
		t.Errorf("kept project key: %d", st)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}

	third, stop := startDev(t, "-credentials", path, "-fresh")
	defer stop()
	if third.Accounts[0].APIKey == acct.APIKey || third.InternalKey == first.InternalKey {
		t.Error("-fresh kept the old keys")
	}
	if st := get(t, third.AgentStudioURL+"/v1/alert-rules", "x-api-key", acct.APIKey); st != 401 {
		t.Errorf("an old key after -fresh: %d, want 401", st)
	}
	if st := get(t, third.AgentStudioURL+"/v1/alert-rules", "x-api-key", third.Accounts[0].APIKey); st != 200 {
		t.Errorf("a fresh key: %d", st)
	}
}

func TestACredentialsFileThatIsNoneIsRefused(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{
		"garbage": "not json",
		"region":  `{"region":"uk","internal_key":"vo_internal_uk_x","accounts":[]}`,
		"badkey":  `{"region":"us","internal_key":"vo_internal_us_x","accounts":[]}`,
	} {
		path := filepath.Join(dir, name+".json")
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		var stderr strings.Builder
		err := run(context.Background(), []string{"-addr", "127.0.0.1:0", "-credentials", path}, func(string) string { return "" }, io.Discard, &stderr, nil)
		if err == nil || !strings.Contains(err.Error(), "-fresh") {
			t.Errorf("%s: %v, want an error suggesting -fresh", name, err)
		}
		if b, _ := os.ReadFile(path); string(b) != content {
			t.Errorf("%s: the file was overwritten", name)
		}
	}
}

func get(t *testing.T, url, header, key string) int {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set(header, key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}
