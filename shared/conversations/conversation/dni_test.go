package conversation

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/store/memory"
	"github.com/voiceops/opsapi/shared/voiceops"
)

func TestStartConsumesDNIReservation(t *testing.T) {
	m := memory.New()
	f := newFixtureOn(t, nil, backend{"memory", m.Stores(), m.AgentConfigs()})
	dni := m.DNI()
	f.e.DNI = dni
	ctx := context.Background()
	const number = "+442000000001"
	if err := dni.AddNumbers(ctx, "acct", "proj", []string{number}, 0); err != nil {
		t.Fatal(err)
	}
	reserve := func(attrs map[string]any) {
		t.Helper()
		if n, _, err := dni.Reserve(ctx, "acct", "proj", attrs, f.now); err != nil || n != number {
			t.Fatalf("Reserve: %q %v", n, err)
		}
	}
	call := func(in StartInput) (Answer, error) {
		in.AccountID, in.ProjectID, in.FromNumber = "acct", "proj", "+441234567890"
		if in.Channel == "" {
			in.Channel = voiceops.ChannelVoice
		}
		return f.e.Start(ctx, in)
	}
	free := func(what string) {
		t.Helper()
		n, _, err := dni.Reserve(ctx, "acct", "proj", nil, f.now)
		if err != nil {
			t.Fatalf("%s: the number is not free: %v", what, err)
		}
		if _, ok, _ := dni.Consume(ctx, "acct", "proj", n, f.now); !ok {
			t.Fatalf("%s: cannot clear the test reservation", what)
		}
	}

	// A call on the reserved number takes the reservation's attributes.
	reserve(map[string]any{"order_id": "o-1", "tier": 2.0})
	ans, err := call(StartInput{ToNumber: number})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"order_id": "o-1", "tier": 2.0}
	if !reflect.DeepEqual(ans.Conversation.IntegrationAttributes, want) {
		t.Errorf("integration_attributes %v, want %v", ans.Conversation.IntegrationAttributes, want)
	}
	c, err := f.stores.Conversations.GetConversation(ctx, "acct", "proj", ans.Conversation.ID)
	if err != nil || !reflect.DeepEqual(c.IntegrationAttributes, want) {
		t.Errorf("stored integration_attributes %v %v", c.IntegrationAttributes, err)
	}
	free("after the call")
	// A second call on the number has no reservation left.
	ans, err = call(StartInput{ToNumber: number})
	if err != nil || len(ans.Conversation.IntegrationAttributes) != 0 {
		t.Errorf("second call: %v %v", ans.Conversation.IntegrationAttributes, err)
	}

	// Attributes the call brings win; the reservation ends all the same.
	reserve(map[string]any{"order_id": "o-2"})
	ans, err = call(StartInput{ToNumber: number, IntegrationAttributes: map[string]any{"crm_id": "c-1"}})
	if err != nil || !reflect.DeepEqual(ans.Conversation.IntegrationAttributes, map[string]any{"crm_id": "c-1"}) {
		t.Errorf("call with attributes: %v %v", ans.Conversation.IntegrationAttributes, err)
	}
	free("after a call with its own attributes")

	// An expired reservation gives nothing.
	reserve(map[string]any{"order_id": "o-3"})
	f.now = f.now.Add(voiceops.DefaultDNIHold)
	ans, err = call(StartInput{ToNumber: number})
	if err != nil || len(ans.Conversation.IntegrationAttributes) != 0 {
		t.Errorf("call after the expiry: %v %v", ans.Conversation.IntegrationAttributes, err)
	}
	free("after the expiry")

	// A refused start (unknown variant) and a chat conversation keep the
	// reservation.
	reserve(map[string]any{"order_id": "o-4"})
	if _, err := call(StartInput{ToNumber: number, VariantID: "nope"}); err == nil {
		t.Fatal("unknown variant: no error")
	}
	if _, err := call(StartInput{ToNumber: number, Channel: voiceops.ChannelWebchat}); err != nil {
		t.Fatal(err)
	}
	f.now = f.now.Add(time.Second)
	if attrs, ok, err := dni.Consume(ctx, "acct", "proj", number, f.now); !ok || err != nil || attrs["order_id"] != "o-4" {
		t.Errorf("the reservation was consumed: %v %v %v", attrs, ok, err)
	}
}
