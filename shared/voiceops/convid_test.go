package voiceops

import (
	"testing"
	"time"
)

func TestConversationIDExample(t *testing.T) {
	// The example of NewConversationID's comment is a valid ID.
	if !ValidConversationID("conv_17419444135892Xy3kQ9Zr1bT7LmPa0cWd") {
		t.Error("the documented example is not a valid conversation ID")
	}
	now := time.Date(2025, 3, 14, 9, 26, 53, 589_000_000, time.UTC)
	if id := NewConversationID(now); !ValidConversationID(id) || id[5:18] != "1741944413589" {
		t.Errorf("NewConversationID = %s", id)
	}
}
