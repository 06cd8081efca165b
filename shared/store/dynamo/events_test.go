package dynamo_test

import (
	"testing"

	"github.com/voiceops/opsapi/shared/store/dynamo"
	"github.com/voiceops/opsapi/shared/store/storetest"
	"github.com/voiceops/opsapi/shared/testsupport/awstest"
	"github.com/voiceops/opsapi/shared/voiceops"
)

func TestEventsContract(t *testing.T) {
	c := client(t)
	db := awstest.Serial(c)
	storetest.RunEvents(t, func(t *testing.T) voiceops.Stores {
		return dynamo.NewStores(db, newTables(t, c))
	})
}

func TestOutboxShardKey(t *testing.T) {
	if got := dynamo.OutboxShardKey(3); got != "OUTBOX#03" {
		t.Errorf("OutboxShardKey(3) = %q", got)
	}
}
