package esm

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	dtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/voiceops/opsapi/shared/testsupport/awstest"
)

// The stream mapping reads moto's DynamoDB Streams API from LATEST, keeps
// the INSERTs its filter names and hands them over as Lambda's DynamoDB
// event (eventSourceARN set) after the batching window.
func TestRunStreamOnMoto(t *testing.T) {
	cfg, endpoint := awstest.Config(t)
	cfg.BaseEndpoint = aws.String(endpoint)
	db := dynamodb.NewFromConfig(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	name := fmt.Sprintf("stream-%d", time.Now().UnixNano())
	out, err := db.CreateTable(ctx, &dynamodb.CreateTableInput{TableName: &name, BillingMode: dtypes.BillingModePayPerRequest,
		AttributeDefinitions: []dtypes.AttributeDefinition{{AttributeName: aws.String("pk"), AttributeType: dtypes.ScalarAttributeTypeS}},
		KeySchema:            []dtypes.KeySchemaElement{{AttributeName: aws.String("pk"), KeyType: dtypes.KeyTypeHash}},
		StreamSpecification:  &dtypes.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: dtypes.StreamViewTypeKeysOnly}})
	if err != nil {
		t.Fatal(err)
	}
	arn := aws.ToString(out.TableDescription.LatestStreamArn)
	insert, _ := ParsePattern(`{"eventName":["INSERT"]}`)
	m := StreamMapping{Function: "evaluator", StreamARN: arn, Region: "us-east-1", StartingPosition: "LATEST", BatchSize: 100,
		Window: 200 * time.Millisecond, Filters: []Pattern{insert}, MaxRetries: 1, ReportFailures: true}
	got := make(chan []byte, 10)
	invoke := func(_ context.Context, _ string, payload []byte) ([]byte, bool, error) {
		got <- payload
		return []byte(`{"batchItemFailures":[]}`), false, nil
	}
	go RunStream(ctx, StreamsAPI{Endpoint: endpoint, Region: "us-east-1"}, nil, m, invoke, slog.New(slog.NewTextHandler(io.Discard, nil)))
	time.Sleep(500 * time.Millisecond) // LATEST: records from when the mapping started
	put := func(pk string) {
		if _, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &name, Item: map[string]dtypes.AttributeValue{"pk": &dtypes.AttributeValueMemberS{Value: pk}}}); err != nil {
			t.Fatal(err)
		}
	}
	put("a")
	put("a") // a MODIFY: filtered out
	put("b")
	var keys []string
	deadline := time.After(15 * time.Second)
	for len(keys) < 2 {
		select {
		case p := <-got:
			var ev struct {
				Records []struct {
					EventName      string `json:"eventName"`
					EventSourceARN string `json:"eventSourceARN"`
					Dynamodb       struct {
						Keys map[string]map[string]string
					} `json:"dynamodb"`
				}
			}
			if err := json.Unmarshal(p, &ev); err != nil {
				t.Fatal(err)
			}
			for _, r := range ev.Records {
				if r.EventName != "INSERT" || r.EventSourceARN != arn {
					t.Errorf("record %+v", r)
				}
				keys = append(keys, r.Dynamodb.Keys["pk"]["S"])
			}
		case <-deadline:
			t.Fatalf("records of %v only", keys)
		}
	}
	if fmt.Sprint(keys) != "[a b]" {
		t.Errorf("keys %v, want [a b]", keys)
	}
}
