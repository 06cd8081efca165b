package awsproxy

import (
	"reflect"
	"testing"

	"github.com/voiceops/opsapi/scripts/stack/iam"
)

func TestRequests(t *testing.T) {
	arns := ARNs{Partition: "aws", Region: "us-east-1", Account: "123456789012"}
	tbl := func(n string) string { return arns.Table(n) }
	secrets := func(name string) string {
		if name == "voiceops-us/internal" {
			return "arn:aws:secretsmanager:us-east-1:123456789012:secret:voiceops-us/internal-AbCdEf"
		}
		return ""
	}
	tests := []struct {
		name string
		call Call
		want []iam.Request
	}{
		{"get item", Call{Target: "DynamoDB_20120810.GetItem", Body: []byte(`{"TableName":"t1"}`)},
			[]iam.Request{{Action: "dynamodb:GetItem", Resource: tbl("t1")}}},
		{"query of an index", Call{Target: "DynamoDB_20120810.Query", Body: []byte(`{"TableName":"t1","IndexName":"gsi1"}`)},
			[]iam.Request{{Action: "dynamodb:Query", Resource: tbl("t1") + "/index/gsi1"}}},
		{"a transaction needs each item's action", Call{Target: "DynamoDB_20120810.TransactWriteItems", Body: []byte(`{"TransactItems":[
			{"Update":{"TableName":"cfg"}},{"Put":{"TableName":"cfg"}},{"ConditionCheck":{"TableName":"other"}},{"Delete":{"TableName":"d"}}]}`)},
			[]iam.Request{{Action: "dynamodb:UpdateItem", Resource: tbl("cfg")}, {Action: "dynamodb:PutItem", Resource: tbl("cfg")},
				{Action: "dynamodb:ConditionCheckItem", Resource: tbl("other")}, {Action: "dynamodb:DeleteItem", Resource: tbl("d")}}},
		{"batch write names every table", Call{Target: "DynamoDB_20120810.BatchWriteItem", Body: []byte(`{"RequestItems":{"b":[],"a":[]}}`)},
			[]iam.Request{{Action: "dynamodb:BatchWriteItem", Resource: tbl("a")}, {Action: "dynamodb:BatchWriteItem", Resource: tbl("b")}}},
		{"sqs by queue URL", Call{Target: "AmazonSQS.SendMessage", Body: []byte(`{"QueueUrl":"http://localhost:5000/123456789012/VoiceOps-us-Q"}`)},
			[]iam.Request{{Action: "sqs:SendMessage", Resource: arns.Queue("VoiceOps-us-Q")}}},
		{"secret by name", Call{Target: "secretsmanager.GetSecretValue", Body: []byte(`{"SecretId":"voiceops-us/internal"}`)},
			[]iam.Request{{Action: "secretsmanager:GetSecretValue", Resource: "arn:aws:secretsmanager:us-east-1:123456789012:secret:voiceops-us/internal-AbCdEf"}}},
		{"lambda invoke by name", Call{Path: "/2015-03-31/functions/voiceops-fn-x/invocations", Method: "POST"},
			[]iam.Request{{Action: "lambda:InvokeFunction", Resource: arns.Function("voiceops-fn-x")}}},
		{"lambda invoke by ARN with a qualifier", Call{Path: "/2015-03-31/functions/arn%3Aaws%3Alambda%3Aus-east-1%3A1%3Afunction%3Afn%3Alive/invocations", Method: "POST"},
			[]iam.Request{{Action: "lambda:InvokeFunction", Resource: arns.Function("fn")}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Requests(arns, tt.call, secrets)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Requests = %v\nwant %v", got, tt.want)
			}
		})
	}
	for _, bad := range []Call{
		{Target: "DynamoDB_20120810.TransactWriteItems", Body: []byte(`{"TransactItems":[{"Frob":{"TableName":"x"}}]}`)},
		{Target: "DynamoDB_20120810.PutItem", Body: []byte(`not json`)},
		{Target: "Unknown.Op", Body: []byte(`{}`)},
		{Path: "/", Method: "GET"},
	} {
		if _, err := Requests(arns, bad, secrets); err == nil {
			t.Errorf("Requests(%+v) succeeded", bad)
		}
	}
}

func TestAccessKeyID(t *testing.T) {
	h := "AWS4-HMAC-SHA256 Credential=STACKALERTS/20260101/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=abc"
	if got := AccessKeyID(h); got != "STACKALERTS" {
		t.Fatalf("AccessKeyID = %q", got)
	}
	if got := AccessKeyID("Bearer x"); got != "" {
		t.Fatalf("AccessKeyID of a bearer token = %q", got)
	}
}
