package dynamo

import (
	"testing"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/voiceops/opsapi/shared/voiceops"
)

// TestIntervalItemSize measures what the concurrency series reads per
// conversation: the item of a typical ended voice call, whole
// (what a Query is billed on: projections do not reduce read capacity)
// and with the interval projection (what travels and is decoded), and
// the estimate for one week of 100,000 conversations plus the day before
// (the read starts MaxConversationLength before the range).
func TestIntervalItemSize(t *testing.T) {
	started := time.Date(2026, 11, 22, 10, 0, 0, 123e6, time.UTC)
	ended := started.Add(4*time.Minute + 17*time.Second + 456*time.Millisecond)
	c := voiceops.Conversation{
		ID: voiceops.NewConversationID(started), AccountID: "acct_acme", ProjectID: "proj_support",
		Environment: voiceops.EnvLive, Channel: voiceops.ChannelVoice, VariantID: "var_main", VariantName: "Main line",
		FromNumber: "+14155550123", ToNumber: "+14155550100", ASRLang: "en-US", TTSLang: "en-US",
		IntegrationAttributes: map[string]any{"crm_id": "C-104522"},
		State:                 map[string]any{"intent": "billing", "account_verified": true, "step": 4, "last_slot": "date"},
		StartedAt:             started, EndedAt: &ended, EndReason: voiceops.EndCompleted,
		NumTurns: 9, NumSilences: 1, ServiceTime: 6*time.Second + 250*time.Millisecond,
		ExpiresAt: started.Add(90 * 24 * time.Hour), Version: 10,
	}
	k, err := conversationKeyOf(c)
	if err != nil {
		t.Fatal(err)
	}
	it, err := encodeConversation(k, c)
	if err != nil {
		t.Fatal(err)
	}
	full := itemSize(it)
	projected := item{}
	for _, a := range intervalAttrs {
		if v, ok := it[a]; ok {
			projected[a] = v
		}
	}
	proj := itemSize(projected)
	if proj >= full || proj > 400 {
		t.Errorf("the interval projection is %d bytes of a %d-byte item: not narrow", proj, full)
	}
	if _, err := decodeInterval(c.AccountID, c.ProjectID, projected); err != nil {
		t.Errorf("the projection does not decode: %v", err)
	}

	const week, dayBefore = 100_000, 100_000 / 7
	n := week + dayBefore
	// Query reads are eventually consistent: half a read unit per 4 KB,
	// summed over the items a call reads (whole items).
	rcu := float64(n*full) / 4096 / 2
	t.Logf("conversation item: %d bytes whole, %d bytes with the interval projection (%d of %d attributes; %d characters of state JSON)",
		full, proj, len(projected), len(it), utf8.RuneCountInString(it[attrState].(*types.AttributeValueMemberS).Value))
	t.Logf("one week of %d conversations + %d the day before = %d items: %.1f MB read (billed, about %.0f read units), %.1f MB returned",
		week, dayBefore, n, float64(n*full)/1e6, rcu, float64(n*proj)/1e6)
}
