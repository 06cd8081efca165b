package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/voiceops/opsapi/shared/keys"
	"github.com/voiceops/opsapi/shared/memory"
	"github.com/voiceops/opsapi/shared/voiceops"
)

func TestOperatorWorkflow(t *testing.T) {
	store := memory.New()
	ctx := context.Background()
	env := func(string) string { return "" }
	opsctl := func(args ...string) (string, error) {
		var out bytes.Buffer
		err := run(ctx, args, env, &out, store)
		return out.String(), err
	}
	mustRun := func(args ...string) string {
		t.Helper()
		out, err := opsctl(args...)
		if err != nil {
			t.Fatalf("opsctl %v: %v", args, err)
		}
		return out
	}
	if out := mustRun("account", "create", "-name", "Acme", "-id", "acct_acme"); strings.TrimSpace(out) != "acct_acme" {
		t.Errorf("account create printed %q", out)
	}
	mustRun("project", "create", "-account", "acct_acme", "-name", "IVR", "-id", "proj_ivr")
	if out := mustRun("project", "list", "-account", "acct_acme"); !strings.Contains(out, "proj_ivr") {
		t.Errorf("project list: %q", out)
	}
	out := mustRun("-region", "uk", "key", "create", "-kind", "api", "-account", "acct_acme")
	secret := strings.Fields(out)[0]
	if p, err := keys.Parse(secret); err != nil || p.Kind != voiceops.KeyAPI || p.Region != voiceops.RegionUK {
		t.Fatalf("key create printed %q (%v)", out, err)
	}
	k, err := store.KeyByDigest(ctx, keys.Digest(secret))
	if err != nil || k.AccountID != "acct_acme" || k.ProjectID != "" {
		t.Fatalf("stored key %+v %v", k, err)
	}
	agentOut := mustRun("key", "create", "-kind", "agent", "-account", "acct_acme", "-project", "proj_ivr")
	list := mustRun("key", "list", "-account", "acct_acme")
	if strings.Contains(list, secret) || strings.Contains(list, strings.Fields(agentOut)[0]) {
		t.Errorf("key list shows a key in full:\n%s", list)
	}
	if !strings.Contains(list, keys.Prefix(secret)) || !strings.Contains(list, "project proj_ivr") {
		t.Errorf("key list lacks prefixes or scopes:\n%s", list)
	}
	if only := mustRun("key", "list", "-account", "acct_acme", "-prefix", "vo_agent_"); strings.Contains(only, keys.Prefix(secret)) || !strings.Contains(only, "agent") {
		t.Errorf("key list -prefix vo_agent_:\n%s", only)
	}
	mustRun("key", "revoke", "-account", "acct_acme", "-key", keys.Prefix(secret))
	if k, _ := store.KeyByDigest(ctx, keys.Digest(secret)); k.RevokedAt == nil {
		t.Errorf("key not revoked")
	}
	for _, bad := range [][]string{
		{"key", "create", "-kind", "agent", "-account", "acct_acme"}, // agent keys need a project
		{"key", "create", "-kind", "root", "-account", "acct_acme"},  // unknown kind
		{"key", "create", "-kind", "api", "-account", "acct_none"},   // unknown account
		{"project", "create", "-account", "acct_none", "-name", "x"}, // unknown account
		{"account", "create", "-name", "Acme", "-id", "acct_acme"},   // exists
		{"account", "create"}, // no name
		{"key", "revoke", "-account", "acct_acme", "-key", "key_doesnotexist"}, // unknown key
		{"-region", "mars", "account", "list"},
		{"frobnicate", "now"},
	} {
		if _, err := opsctl(bad...); err == nil {
			t.Errorf("opsctl %v succeeded", bad)
		}
	}
	if help := mustRun("help"); !strings.Contains(help, "key create -kind KIND") {
		t.Errorf("help: %q", help)
	}
}
