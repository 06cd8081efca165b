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
	"github.com/voiceops/opsapi/scripts/stack/sns"
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

// The template's alarm topic and its SQS subscription exist on moto (a
// publication reaches the queue), and a topic an alarm names only by ARN
// is made with that ARN.
func TestTopicsOnMoto(t *testing.T) {
	cfg, endpoint := awstest.Config(t)
	cfg.BaseEndpoint = aws.String(endpoint)
	c := Clients{DynamoDB: dynamodb.NewFromConfig(cfg), SQS: sqs.NewFromConfig(cfg), SecretsManager: secretsmanager.NewFromConfig(cfg),
		SNS: sns.Client{Endpoint: endpoint, Region: "us-east-1"}}
	suffix := fmt.Sprint(time.Now().UnixNano())
	var tmpl cfn.Template
	if err := json.Unmarshal([]byte(`{"Resources":{
		"Topic": {"Type":"AWS::SNS::Topic","Properties":{"DisplayName":"alarms"}},
		"Sub": {"Type":"AWS::SNS::Subscription","Properties":{"Protocol":"sqs","TopicArn":{"Ref":"Topic"},"Endpoint":{"Fn::GetAtt":["Inbox","Arn"]},"RawMessageDelivery":true}},
		"Mail": {"Type":"AWS::SNS::Subscription","Properties":{"Protocol":"email","TopicArn":{"Ref":"Topic"},"Endpoint":"ops@example.com"}},
		"Inbox": {"Type":"AWS::SQS::Queue","Properties":{}}
	}}`), &tmpl); err != nil {
		t.Fatal(err)
	}
	v := cfn.NewValues("123456789012", "us-east-1", "T"+suffix)
	ctx := context.Background()
	if err := Stack(ctx, c, tmpl, "T"+suffix, v); err != nil {
		t.Fatal(err)
	}
	topic := v.Refs["Topic"]
	if topic != "arn:aws:sns:us-east-1:123456789012:T"+suffix+"-Topic" || v.Attrs["Topic"]["TopicArn"] != topic {
		t.Fatalf("topic %q %v", topic, v.Attrs["Topic"])
	}
	if err := c.SNS.Publish(ctx, topic, "", "hello"); err != nil {
		t.Fatal(err)
	}
	out, err := c.SQS.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(v.Refs["Inbox"]), WaitTimeSeconds: 2})
	if err != nil || len(out.Messages) != 1 || aws.ToString(out.Messages[0].Body) != "hello" {
		t.Fatalf("the subscribed queue got %+v %v, want the raw message", out, err)
	}
	named := "arn:aws:sns:us-west-2:123456789012:ops-" + suffix
	if err := Topics(ctx, c.SNS, []string{named}); err != nil {
		t.Fatal(err)
	}
	west := sns.Client{Endpoint: endpoint, Region: "us-west-2"}
	if err := west.Publish(ctx, named, "", "x"); err != nil {
		t.Errorf("the named topic does not exist: %v", err)
	}
	if err := Topics(ctx, c.SNS, []string{"arn:aws:sns:us-east-1:999999999999:elsewhere"}); err == nil {
		t.Error("a topic of another account was accepted")
	}
}
