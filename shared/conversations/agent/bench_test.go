package agent_test

import (
	"context"
	"testing"

	"github.com/voiceops/opsapi/shared/conversations/agent"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// BenchmarkScriptedTurn answers turns of the demo agent: a turn must take
// microseconds (the chat turn budget is 200 µs in all).
func BenchmarkScriptedTurn(b *testing.B) {
	v, _ := agent.DemoConfig("acct_bench", "proj_bench").Variant("")
	a, err := agent.New(v.Agent, agent.Deps{})
	if err != nil {
		b.Fatal(err)
	}
	conv := voiceops.Conversation{ID: "conv_bench", State: map[string]any{"balance_told": true}}
	for _, bc := range []struct {
		name string
		req  agent.Request
	}{
		{"greeting", agent.Request{Start: true}},
		{"keyword", agent.Request{Turn: voiceops.Turn{UserInput: "Hello, could I please speak to a human about my account?"}}},
		{"dtmf", agent.Request{Turn: voiceops.Turn{UserInputDTMF: "2"}}},
		{"regex", agent.Request{Turn: voiceops.Turn{UserInput: "Where is my order number 1234567, it was due yesterday"}}},
		{"fallback", agent.Request{Turn: voiceops.Turn{UserInput: "I would like to know the opening hours of the branch near the station"}}},
		{"silence", agent.Request{Turn: voiceops.Turn{IsSilence: true}}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			bc.req.Conversation = conv
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := a.Respond(ctx, bc.req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkNewScripted builds the demo agent (compiling its regular
// expressions): what a caller pays when it does not keep agents.
func BenchmarkNewScripted(b *testing.B) {
	v, _ := agent.DemoConfig("acct_bench", "proj_bench").Variant("")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := agent.New(v.Agent, agent.Deps{}); err != nil {
			b.Fatal(err)
		}
	}
}
