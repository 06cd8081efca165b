package deploy

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/voiceops/opsapi/scripts/stack/cfn"
	"github.com/voiceops/opsapi/shared/testsupport/awstest"
)

// The template's properties reach moto: keys, GSI, stream, TTL; the
// queue's visibility timeout, retention and redrive to its DLQ (created
// first, whatever the order); a generated secret with its template.
func TestStackOnMoto(t *testing.T) {
	cfg, endpoint := awstest.Config(t)
	cfg.BaseEndpoint = aws.String(endpoint)
	c := Clients{DynamoDB: dynamodb.NewFromConfig(cfg), SQS: sqs.NewFromConfig(cfg), SecretsManager: secretsmanager.NewFromConfig(cfg)}
	suffix := fmt.Sprint(time.Now().UnixNano())
	var tmpl cfn.Template
	if err := json.Unmarshal([]byte(strings.ReplaceAll(`{"Resources":{
		"AQueue": {"Type":"AWS::SQS::Queue","Properties":{"VisibilityTimeout":330,"MessageRetentionPeriod":300,
			"RedrivePolicy":{"deadLetterTargetArn":{"Fn::GetAtt":["ZDLQ","Arn"]},"maxReceiveCount":3}}},
		"ZDLQ": {"Type":"AWS::SQS::Queue","Properties":{"MessageRetentionPeriod":1209600}},
		"Table": {"Type":"AWS::DynamoDB::Table","Properties":{"TableName":"t-SUFFIX","BillingMode":"PAY_PER_REQUEST",
			"AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"},{"AttributeName":"sk","AttributeType":"S"},{"AttributeName":"g","AttributeType":"S"}],
			"KeySchema":[{"AttributeName":"pk","KeyType":"HASH"},{"AttributeName":"sk","KeyType":"RANGE"}],
			"GlobalSecondaryIndexes":[{"IndexName":"gsi","KeySchema":[{"AttributeName":"g","KeyType":"HASH"}],"Projection":{"ProjectionType":"ALL"}}],
			"StreamSpecification":{"StreamViewType":"KEYS_ONLY"},
			"TimeToLiveSpecification":{"AttributeName":"expires_at","Enabled":true}}},
		"Secret": {"Type":"AWS::SecretsManager::Secret","Properties":{"Name":"s-SUFFIX","GenerateSecretString":{"SecretStringTemplate":"{}","GenerateStringKey":"_generated","ExcludePunctuation":true}}}
	}}`, "SUFFIX", suffix)), &tmpl); err != nil {
		t.Fatal(err)
	}
	v := cfn.NewValues("123456789012", "us-east-1", "S"+suffix)
	ctx := context.Background()
	if err := Stack(ctx, c, tmpl, "S"+suffix, v); err != nil {
		t.Fatal(err)
	}
	d, err := c.DynamoDB.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String("t-" + suffix)})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Table.GlobalSecondaryIndexes) != 1 || d.Table.StreamSpecification == nil || v.Attrs["Table"]["StreamArn"] == "" || v.Refs["Table"] != "t-"+suffix {
		t.Errorf("table %+v, values %v", d.Table, v.Attrs["Table"])
	}
	ttl, err := c.DynamoDB.DescribeTimeToLive(ctx, &dynamodb.DescribeTimeToLiveInput{TableName: aws.String("t-" + suffix)})
	if err != nil || aws.ToString(ttl.TimeToLiveDescription.AttributeName) != "expires_at" {
		t.Errorf("TTL %+v %v", ttl, err)
	}
	qa, err := c.SQS.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(v.Refs["AQueue"]), AttributeNames: []sqstypes.QueueAttributeName{"All"}})
	if err != nil {
		t.Fatal(err)
	}
	if qa.Attributes["VisibilityTimeout"] != "330" || qa.Attributes["MessageRetentionPeriod"] != "300" ||
		!strings.Contains(qa.Attributes["RedrivePolicy"], v.Attrs["ZDLQ"]["Arn"]) {
		t.Errorf("queue attributes %v", qa.Attributes)
	}
	sv, err := c.SecretsManager.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String(v.Refs["Secret"])})
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]string
	if err := json.Unmarshal([]byte(aws.ToString(sv.SecretString)), &m); err != nil || len(m["_generated"]) != 32 {
		t.Errorf("secret %q: %v", aws.ToString(sv.SecretString), err)
	}
	// A second run finds everything in place.
	if err := Stack(ctx, c, tmpl, "S"+suffix, cfn.NewValues("123456789012", "us-east-1", "S"+suffix)); err != nil {
		t.Fatalf("second run: %v", err)
	}
}
