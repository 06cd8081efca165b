package conversation

import (
	"testing"

	"github.com/voiceops/opsapi/shared/store/dynamo"
	"github.com/voiceops/opsapi/shared/testsupport/awstest"
)

// backends returns the stores to run the end-to-end tests on: memory, and
// DynamoDB at the emulator scripts/test.sh starts (in CI a missing emulator
// is a failure, not a skip).
func backends(t *testing.T) []backend {
	bs := []backend{memoryBackend(t)}
	if !awstest.Available(t) {
		return bs
	}
	c := awstest.DynamoDB(t)
	names := awstest.Tables(t, c)
	// Serial: the race tests need DynamoDB's atomic conditional writes,
	// which moto does not give concurrent requests.
	db := awstest.Serial(c)
	return append(bs, backend{"dynamodb", dynamo.NewStores(db, names), dynamo.NewConfig(db, names.Config, names.Deliveries).AgentConfigs()})
}
