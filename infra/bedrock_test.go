package main

import (
	"slices"
	"strings"
	"testing"
)

// TestBedrockGrants: with no models in context (cdk.json's default) no
// role may call Bedrock; with models and guardrails named, chat and calls
// (the functions that answer turns) may call exactly those, in the stack's
// region, and no other function may.
func TestBedrockGrants(t *testing.T) {
	bedrockGrants := func(tmpl map[string]any, name string) []grant {
		_, fn := functionResource(t, tmpl, name)
		var out []grant
		for _, g := range roleGrants(tmpl, getAttTarget(props(fn)["Role"])) {
			if strings.HasPrefix(g.action, "bedrock:") {
				out = append(out, g)
			}
		}
		return out
	}
	def := defaultSynth(t).json["VoiceOps-us"]
	for _, f := range Functions {
		if g := bedrockGrants(def, f.Name); len(g) > 0 {
			t.Errorf("%s with no bedrockModels: %v", f.Name, g)
		}
	}

	const model, guardrail = "anthropic.claude-3-haiku-20240307-v1:0", "gr1abc"
	tmpl := mustSynth(t, map[string]any{"region": "uk", "bedrockModels": []any{model}, "bedrockGuardrails": []any{guardrail}}, Functions).json["VoiceOps-uk"]
	want := []grant{
		{"bedrock:InvokeModel", "arn:${Partition}:bedrock:${Region}::foundation-model/" + model},
		{"bedrock:ApplyGuardrail", "arn:${Partition}:bedrock:${Region}:${AccountId}:guardrail/" + guardrail},
	}
	for _, f := range Functions {
		got := bedrockGrants(tmpl, f.Name)
		if f.Name == "chat" || f.Name == "calls" {
			if !slices.Equal(sortedGrants(got), sortedGrants(want)) {
				t.Errorf("%s: %v, want %v", f.Name, got, want)
			}
		} else if len(got) > 0 {
			t.Errorf("%s runs no agent's turn but may call Bedrock: %v", f.Name, got)
		}
	}
}

// TestBedrockContextRefusesWideningIDs: a model or guardrail ID that would
// widen the grant (a wildcard, an ARN) fails the synth.
func TestBedrockContextRefusesWideningIDs(t *testing.T) {
	for _, ctx := range []map[string]any{
		{"region": "us", "bedrockModels": []any{"*"}},
		{"region": "us", "bedrockModels": "anthropic.*"},
		{"region": "us", "bedrockModels": []any{"arn:aws:bedrock:us-east-1::foundation-model/x.y"}},
		{"region": "us", "bedrockGuardrails": []any{"gr*"}},
	} {
		if _, err := trySynth(t, ctx, Functions); err == nil || !strings.Contains(err.Error(), "is not an ID") {
			t.Errorf("%v: %v, want a refusal", ctx, err)
		}
	}
}
