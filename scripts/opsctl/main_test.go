package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/voiceops/opsapi/shared/conversations/agent"
	"github.com/voiceops/opsapi/shared/platform/keys"
	"github.com/voiceops/opsapi/shared/store/memory"
	"github.com/voiceops/opsapi/shared/voiceops"
)

func TestOperatorWorkflow(t *testing.T) {
	store := memory.New()
	ctx := context.Background()
	env := func(string) string { return "" }
	opsctl := func(args ...string) (string, error) {
		var out bytes.Buffer
		err := run(ctx, args, env, &out, &stores{accounts: store, agents: store.AgentConfigs()})
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
	agentOut := mustRun("key", "create", "-kind", "agent", "-account", "acct_acme", "-project", "proj_ivr", "-env", "sandbox")
	if k, err := store.KeyByDigest(ctx, keys.Digest(strings.Fields(agentOut)[0])); err != nil || k.Environment != "sandbox" {
		t.Errorf("agent token %+v %v, want environment sandbox", k, err)
	}
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

func TestAgentCommands(t *testing.T) {
	store := memory.New()
	ctx := context.Background()
	opsctl := func(args ...string) (string, error) {
		var out bytes.Buffer
		err := run(ctx, args, func(string) string { return "" }, &out, &stores{accounts: store, agents: store.AgentConfigs()})
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
	mustRun("account", "create", "-name", "Acme", "-id", "acct_acme")
	mustRun("project", "create", "-account", "acct_acme", "-name", "IVR", "-id", "proj_ivr")
	mustRun("project", "create", "-account", "acct_acme", "-name", "Web", "-id", "proj_web")
	dir := t.TempDir()
	write := func(name, content string) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}

	demo := write("demo.json", string(agent.DemoJSON()))
	out := mustRun("agent", "load", "-account", "acct_acme", "-project", "proj_ivr", "-file", demo)
	for _, want := range []string{"acct_acme/proj_ivr", "main", "Demo IVR", "yes", "scripted, 5 rules", "express"} {
		if !strings.Contains(out, want) {
			t.Errorf("agent load output lacks %q:\n%s", want, out)
		}
	}
	stored, err := agent.GetConfig(ctx, store.AgentConfigs(), "acct_acme", "proj_ivr")
	if err != nil {
		t.Fatalf("GetConfig: %v", err)
	}
	if want := agent.DemoConfig("acct_acme", "proj_ivr"); !reflect.DeepEqual(stored, want) {
		t.Errorf("stored %+v, want %+v", stored, want)
	}
	shown := mustRun("agent", "show", "-account", "acct_acme", "-project", "proj_ivr")
	if again, err := agent.ParseConfig([]byte(shown), voiceops.URLPolicy{}); err != nil || !reflect.DeepEqual(again, stored) {
		t.Errorf("agent show prints what was stored: %v\n%s", err, shown)
	}

	// An HTTP agent with functions: secrets are masked unless asked for;
	// URLs are printed by host only.
	const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	own := write("own.json", `{"account_id": "acct_acme", "project_id": "proj_web", "variants": [{"id": "own", "agent": {"type": "http", "http": {
	  "url": "https://agent.example.com/turn?token=abc", "signing_secret": "`+secret+`", "headers": {"Authorization": "Bearer sesame"}}}}],
	  "functions": {"on_end": {"lambda_arn": "arn:aws:lambda:us-east-1:123456789012:function:end"},
	    "on_turn": {"url": "https://fn.example.com/turn?key=k", "signing_secret": "`+secret+`", "timeout_ms": 500}}}`)
	out = mustRun("agent", "load", "-account", "acct_acme", "-project", "proj_web", "-file", own)
	for _, want := range []string{"http, agent.example.com, timeout 2000ms", "on_end", "arn:aws:lambda:us-east-1:123456789012:function:end", "on_turn", "fn.example.com", "500ms"} {
		if !strings.Contains(out, want) {
			t.Errorf("agent load output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "token=abc") || strings.Contains(out, secret) {
		t.Errorf("agent load shows a URL's query or a secret:\n%s", out)
	}
	shown = mustRun("agent", "show", "-account", "acct_acme", "-project", "proj_web")
	if strings.Contains(shown, secret) || strings.Contains(shown, "sesame") || !strings.Contains(shown, "masked") {
		t.Errorf("agent show does not mask secrets:\n%s", shown)
	}
	shown = mustRun("agent", "show", "-account", "acct_acme", "-project", "proj_web", "-reveal-secrets")
	var c agent.Config
	if err := json.Unmarshal([]byte(shown), &c); err != nil || c.Variants[0].Agent.HTTP.SigningSecret != secret || c.Functions[agent.HookOnTurn].SigningSecret != secret {
		t.Errorf("agent show -reveal-secrets: %v\n%s", err, shown)
	}

	// A bad configuration is refused with the path of each problem, and
	// the stored one stays.
	bad := write("bad.json", `{"variants": [{"id": "v", "agent": {"type": "scripted", "scripted": {
	  "greeting": "hi", "fallback": "", "rules": [{"regex": "(", "response": "r"}]}}}], "extra": true}`)
	_, err = opsctl("agent", "load", "-account", "acct_acme", "-project", "proj_ivr", "-file", bad)
	if err == nil || !strings.Contains(err.Error(), "extra: unknown field") || !strings.Contains(err.Error(), "nothing was stored") {
		t.Errorf("bad file: %v", err)
	}
	bad2 := write("bad2.json", `{"variants": [{"id": "v", "agent": {"type": "scripted", "scripted": {
	  "greeting": "hi", "fallback": "", "rules": [{"regex": "(", "response": "r"}]}}}]}`)
	_, err = opsctl("agent", "load", "-account", "acct_acme", "-project", "proj_ivr", "-file", bad2)
	if err == nil || !strings.Contains(err.Error(), "variants[0].agent.scripted.fallback: must not be empty") ||
		!strings.Contains(err.Error(), "variants[0].agent.scripted.rules[0].regex: missing closing )") {
		t.Errorf("bad file: %v", err)
	}
	if c, _ := agent.GetConfig(ctx, store.AgentConfigs(), "acct_acme", "proj_ivr"); !reflect.DeepEqual(c, stored) {
		t.Errorf("a refused file changed the stored configuration")
	}

	for _, bad := range [][]string{
		{"agent", "load", "-account", "acct_acme", "-project", "proj_ivr"},                            // no file
		{"agent", "load", "-account", "acct_acme", "-file", demo},                                     // no project
		{"agent", "load", "-account", "acct_acme", "-project", "proj_ivr", "-file", dir + "/missing"}, // no such file
		{"agent", "load", "-account", "acct_acme", "-project", "proj_none", "-file", demo},            // no such project
		{"agent", "load", "-account", "acct_none", "-project", "proj_ivr", "-file", demo},             // no such account
		{"agent", "load", "-account", "acct_acme", "-project", "proj_ivr", "-file", own},              // the file is proj_web's
		{"agent", "show", "-account", "acct_acme", "-project", "proj_none"},                           // no configuration
		{"agent", "show", "-account", "acct_acme"},                                                    // no project
	} {
		if _, err := opsctl(bad...); err == nil {
			t.Errorf("opsctl %v succeeded", bad)
		}
	}
	if _, err := agent.GetConfig(ctx, store.AgentConfigs(), "acct_acme", "proj_none"); !errors.Is(err, voiceops.ErrNotFound) {
		t.Errorf("a configuration was stored for a missing project: %v", err)
	}
	if help := mustRun("help"); !strings.Contains(help, "agent load -account ID -project ID -file FILE") || !strings.Contains(help, "agent show") {
		t.Errorf("help: %q", help)
	}
}
