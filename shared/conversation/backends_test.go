package conversation

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/voiceops/opsapi/shared/dynamo"
	"github.com/voiceops/opsapi/shared/tables"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// backends returns the stores to run the end-to-end tests on: memory, and
// DynamoDB at TEST_AWS_ENDPOINT (moto, started by scripts/test.sh; in CI a
// missing endpoint is a failure, not a skip).
func backends(t *testing.T) []backend {
	bs := []backend{memoryBackend(t)}
	endpoint := os.Getenv("TEST_AWS_ENDPOINT")
	if endpoint == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("TEST_AWS_ENDPOINT not set; CI must run the DynamoDB tests (scripts/test.sh starts moto_server)")
		}
		t.Log("TEST_AWS_ENDPOINT not set: DynamoDB variant skipped (scripts/test.sh starts moto_server)")
		return bs
	}
	cfg, err := config.LoadDefaultConfig(context.Background(), config.WithRegion("us-east-1"),
		config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider("test", "test", "")))
	if err != nil {
		t.Fatal(err)
	}
	c := dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) { o.BaseEndpoint = aws.String(endpoint) })
	names := dynamo.TableNamesFor("conv-" + strings.ToLower(voiceops.RandomBase62(10)))
	if err := dynamo.CreateTables(context.Background(), c, names); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, tb := range tables.All {
			_, _ = c.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(names.Of(tb))})
		}
	})
	s := dynamo.New(c, names)
	return append(bs, backend{"dynamodb", s.Stores(), s.AgentConfigs()})
}
