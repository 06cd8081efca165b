package demoseed

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/ops/provision"
	"github.com/voiceops/opsapi/shared/platform/keys"
	"github.com/voiceops/opsapi/shared/store/memory"
	"github.com/voiceops/opsapi/shared/voiceops"
)

func stores(mem *memory.Store) Stores {
	return Stores{Provisioner: provision.Provisioner{Accounts: mem.Stores().Accounts, Region: "us", Now: time.Now},
		Configs: mem.AgentConfigs(), DNI: mem.DNI()}
}

// Seed makes 2 accounts of 2 projects, every key stored and of its kind,
// the demo agent and a DNI pool; seeding again with the first run's
// credentials keeps every key and adds no account.
func TestSeedThenReseed(t *testing.T) {
	ctx := context.Background()
	mem := memory.New()
	c, err := Seed(ctx, stores(mem), nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Region != "us" || len(c.Accounts) != 2 || len(c.Accounts[0].Projects) != 2 || len(c.Accounts[1].Projects) != 2 {
		t.Fatalf("seeded %+v", c)
	}
	check := func(secret string, kind voiceops.KeyKind, acct, proj string) {
		t.Helper()
		k, err := mem.Stores().Accounts.KeyByDigest(ctx, keys.Digest(secret))
		if err != nil || k.Kind != kind || k.AccountID != acct || k.ProjectID != proj {
			t.Errorf("%s key of %s %s: %+v %v", kind, acct, proj, k, err)
		}
	}
	for _, a := range c.Accounts {
		check(a.APIKey, voiceops.KeyAPI, a.AccountID, "")
		for _, p := range a.Projects {
			check(p.APIKey, voiceops.KeyAPI, a.AccountID, p.ProjectID)
			check(p.AgentToken, voiceops.KeyAgent, a.AccountID, p.ProjectID)
			check(p.ServiceAuthToken, voiceops.KeyService, a.AccountID, p.ProjectID)
			check(p.EventsKey, voiceops.KeyEvents, a.AccountID, p.ProjectID)
			if _, err := mem.AgentConfigs().GetAgentConfig(ctx, a.AccountID, p.ProjectID); err != nil {
				t.Errorf("agent config of %s: %v", p.ProjectID, err)
			}
		}
	}
	if n, _, err := mem.DNI().Reserve(ctx, "acct_demo2", "proj_demo2b", nil, time.Now()); err != nil || n != "+441632962100" && n != "+441632962101" && n != "+441632962102" {
		t.Errorf("reservation in proj_demo2b's pool: %q %v", n, err)
	}
	again, err := Seed(ctx, stores(mem), &c)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(again, c) {
		t.Errorf("reseeded with the first credentials:\n%+v\nwant\n%+v", again, c)
	}
	fresh, err := Seed(ctx, stores(mem), nil)
	if err != nil || fresh.Accounts[0].APIKey == c.Accounts[0].APIKey {
		t.Errorf("reseeded fresh: same key %v, %v", fresh.Accounts[0].APIKey == c.Accounts[0].APIKey, err)
	}
}

func TestWrite(t *testing.T) {
	c := Credentials{BaseURL: "http://x", Region: "us", Accounts: []AccountCredentials{{AccountID: "acct_demo1"}}}
	var out bytes.Buffer
	if err := Write(c, "", &out); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "creds.json")
	if err := Write(c, path, nil); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(b, out.Bytes()) {
		t.Fatalf("file %q (%v), stdout %q", b, err, out.Bytes())
	}
	var got Credentials
	if err := json.Unmarshal(b, &got); err != nil || !reflect.DeepEqual(got, c) {
		t.Errorf("read back %+v %v", got, err)
	}
	if _, err := os.Stat(path + ".tmp"); err == nil {
		t.Error("the temporary file is left")
	}
}

// Previous reads a written file back whole, reads no file as nil, and
// refuses a file of another region or another kind, naming -fresh.
func TestPrevious(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "creds.json")
	if c, err := Previous(path, "us"); c != nil || err != nil {
		t.Fatalf("no file: %v %v", c, err)
	}
	want := Credentials{Region: "us", InternalKey: "secret", Accounts: []AccountCredentials{{AccountID: "acct_demo1", APIKey: "k",
		Projects: []ProjectCredentials{{ProjectID: "p", APIKey: "a", AgentToken: "b", ServiceAuthToken: "c", EventsKey: "d"}}}}}
	if err := Write(want, path, nil); err != nil {
		t.Fatal(err)
	}
	got, err := Previous(path, "us")
	if err != nil || !reflect.DeepEqual(*got, want) {
		t.Fatalf("read back %+v %v, want %+v", got, err, want)
	}
	if _, err := Previous(path, "eu"); err == nil || !bytes.Contains([]byte(err.Error()), []byte("-fresh")) {
		t.Errorf("another region: %v", err)
	}
	if err := os.WriteFile(path, []byte(`{"hello":1}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Previous(path, "us"); err == nil || !bytes.Contains([]byte(err.Error()), []byte("-fresh")) {
		t.Errorf("not a credentials file: %v", err)
	}
}
