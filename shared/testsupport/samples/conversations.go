package samples

import (
	"fmt"
	"strings"
	"time"

	"github.com/voiceops/opsapi/shared/voiceops"
)

// The conversations below are the fixtures of the conversation list tests
// (golden files, the encoder against encoding/json, benchmarks).

// Conversation is a conversation and its turns as a test stores them.
type Conversation struct {
	Conv  voiceops.Conversation
	Turns []voiceops.Turn
}

// ConversationAt returns a finished live conversation of acct_a/proj_a1
// with one greeting turn.
func ConversationAt(start time.Time) Conversation {
	start = start.UTC().Truncate(time.Millisecond)
	end := start.Add(95 * time.Second)
	c := voiceops.Conversation{
		ID: voiceops.NewConversationID(start), AccountID: "acct_a", ProjectID: "proj_a1",
		Environment: voiceops.EnvLive, Channel: voiceops.ChannelVoice, VariantID: "main", VariantName: "Demo IVR",
		FromNumber: "+441632960001", ToNumber: "+441632960002", State: map[string]any{},
		StartedAt: start, EndedAt: &end, EndReason: voiceops.EndCompleted, NumTurns: 1,
		ServiceTime: 400 * time.Millisecond, ExpiresAt: start.AddDate(10, 0, 0),
	}
	greeting := voiceops.Turn{Index: 0, UserInputAt: start, AgentResponse: "Welcome to Acme.",
		AgentResponseAt: start.Add(400 * time.Millisecond), Latency: 400 * time.Millisecond}
	return Conversation{Conv: c, Turns: []voiceops.Turn{greeting}}
}

// fixedConversationID is a conversation ID with a readable tag.
func fixedConversationID(start time.Time, shard int, tag string) string {
	return fmt.Sprintf("%s%013d%d%s", voiceops.PrefixConversation, start.UnixMilli(), shard, (tag + strings.Repeat("0", 20))[:20])
}

// GoldenConversations are the conversations of the golden files: every field
// set or empty at least once, text that needs escaping, a sandbox one
// that the default filter leaves out.
func GoldenConversations() []Conversation {
	t0 := time.Date(2026, 11, 21, 9, 30, 0, 0, time.UTC)
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }

	// 1. A finished voice call: DTMF, a silence, an out-of-domain turn,
	// entities, a failed function, nested state.
	call := ConversationAt(t0)
	call.Conv.ID = fixedConversationID(call.Conv.StartedAt, 2, "VoiceCallGolden")
	end := t0.Add(ms(61_500))
	call.Conv.EndedAt, call.Conv.NumTurns, call.Conv.NumSilences, call.Conv.NumOOD = &end, 4, 1, 1
	call.Conv.ServiceTime = ms(2_480)
	call.Conv.ASRLang, call.Conv.TTSLang = "en-GB", "en-GB"
	call.Conv.State = map[string]any{"account": map[string]any{"verified": true, "tier": "gold", "balance": 1234.56},
		"attempts": float64(2), "notes": []any{"said \"hi\"", nil, 1e-7, float64(1) / 3}}
	call.Turns = []voiceops.Turn{
		{Index: 0, UserInputAt: t0, AgentResponse: "Welcome to Acme. Press 1 for balance.", AgentResponseAt: t0.Add(ms(412)), Latency: ms(412)},
		{Index: 1, UserInputDTMF: "1", UserInputAt: t0.Add(ms(9_000)), AgentResponse: "Your balance is 1,234.56 dollars.",
			AgentResponseAt: t0.Add(ms(9_800)), Latency: ms(800), Intents: []string{"balance"},
			Entities: []map[string]any{{"type": "account", "value": "****1234"}}, FunctionErrors: 1},
		{Index: 2, UserInputAt: t0.Add(ms(20_000)), AgentResponse: "Are you still there?", AgentResponseAt: t0.Add(ms(20_250)),
			Latency: ms(250), IsSilence: true},
		{Index: 3, UserInput: "what's the weather <today> & tomorrow?", UserInputAt: t0.Add(ms(30_000)),
			AgentResponse: "Sorry, I can only help with your account.\nGoodbye.", AgentResponseAt: t0.Add(ms(31_018)),
			Latency: ms(1_018), IsOOD: true, Intents: []string{}},
	}

	// 2. A chat handed off, with translations and turn metadata.
	chat := ConversationAt(t0.Add(10 * time.Minute))
	chat.Conv.ID = fixedConversationID(chat.Conv.StartedAt, 1, "ChatHandoffGolden")
	chat.Conv.Channel, chat.Conv.FromNumber, chat.Conv.ToNumber = voiceops.ChannelWebchat, "", ""
	chat.Conv.VariantID, chat.Conv.VariantName = "express", "Express lane"
	end2 := chat.Conv.StartedAt.Add(ms(42_700))
	chat.Conv.EndedAt, chat.Conv.EndReason, chat.Conv.NumTurns = &end2, voiceops.EndHandoff, 2
	chat.Conv.Handoff, chat.Conv.HandoffReason, chat.Conv.HandoffDestination = true, "caller asked for a human", "support-queue"
	chat.Conv.ServiceTime = ms(1_500)
	chat.Conv.State = map[string]any{"handoff": map[string]any{"queue": "support-queue"}, "lang": "fr"}
	s2 := chat.Conv.StartedAt
	chat.Turns = []voiceops.Turn{
		{Index: 0, UserInputAt: s2, AgentResponse: "Bonjour !", AgentResponseAt: s2.Add(ms(300)), Latency: ms(300),
			EnglishAgentResponse: "Hello!"},
		{Index: 1, UserInput: "Je veux parler à quelqu’un \u2028 maintenant", UserInputAt: s2.Add(ms(42_000)),
			AgentResponse: "Je vous transfère.", AgentResponseAt: s2.Add(ms(43_200)), Latency: ms(1_200),
			TranslatedUserInput: "I want to talk to someone now", EnglishAgentResponse: "I am transferring you.",
			Intents: []string{"agent"}, Metadata: map[string]any{"page": "/help", "widget": map[string]any{"v": float64(3)}}},
	}

	// 3. A call in progress with nothing optional: no numbers, no variant
	// name, no turns yet.
	live := ConversationAt(t0.Add(20 * time.Minute))
	live.Conv.ID = fixedConversationID(live.Conv.StartedAt, 3, "InProgressGolden")
	live.Conv.FromNumber, live.Conv.ToNumber, live.Conv.VariantName = "", "", ""
	live.Conv.EndedAt, live.Conv.EndReason, live.Conv.InProgress, live.Conv.NumTurns, live.Conv.ServiceTime = nil, "", true, 0, 0
	live.Conv.State = nil
	live.Turns = nil

	// 4. A sandbox conversation: not in the default (live) listing.
	sandbox := ConversationAt(t0.Add(30 * time.Minute))
	sandbox.Conv.ID = fixedConversationID(sandbox.Conv.StartedAt, 0, "SandboxGolden")
	sandbox.Conv.Environment = voiceops.EnvSandbox
	return []Conversation{call, chat, live, sandbox}
}

// BenchConversations builds n finished conversations of turnsEach turns,
// with realistic text, state and entities.
func BenchConversations(n, turnsEach int) []Conversation {
	base := time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)
	out := make([]Conversation, n)
	for i := range n {
		f := ConversationAt(base.Add(time.Duration(i) * 7 * time.Second))
		f.Conv.NumTurns = turnsEach
		f.Conv.ASRLang, f.Conv.TTSLang = "en-GB", "en-GB"
		f.Conv.State = map[string]any{"customer_id": fmt.Sprintf("cus_%06d", i), "verified": i%2 == 0, "attempts": float64(i % 3),
			"last_intent": "balance", "cart": []any{map[string]any{"sku": "A-1", "qty": float64(1)}}}
		f.Turns = make([]voiceops.Turn, turnsEach)
		for j := range turnsEach {
			at := f.Conv.StartedAt.Add(time.Duration(j) * 6 * time.Second)
			f.Turns[j] = voiceops.Turn{Index: j, UserInput: "I would like to check the balance of my current account please",
				UserInputAt: at, AgentResponse: "Sure. Your current account balance is 1,234.56 dollars. Anything else?",
				AgentResponseAt: at.Add(640 * time.Millisecond), Latency: 640 * time.Millisecond, Intents: []string{"balance"},
				Entities: []map[string]any{{"type": "account", "value": "current"}}}
		}
		out[i] = f
	}
	return out
}
