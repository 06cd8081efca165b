package awsproxy

import (
	"testing"

	"github.com/voiceops/opsapi/scripts/stack/iam"
)

// FuzzRequests: any call either decodes into at least one permission to
// check, every one with an action and a resource, or is refused with an
// error.
func FuzzRequests(f *testing.F) {
	f.Add("DynamoDB_20120810.TransactWriteItems", "/", `{"TransactItems":[{"Put":{"TableName":"a"}},{"ConditionCheck":{"TableName":"b"}}]}`)
	f.Add("DynamoDB_20120810.Query", "/", `{"TableName":"t","IndexName":"gsi1"}`)
	f.Add("AmazonSQS.SendMessage", "/", `{"QueueUrl":"http://x/1/q"}`)
	f.Add("", "/2015-03-31/functions/fn/invocations", ``)
	f.Add("secretsmanager.GetSecretValue", "/", `{"SecretId":"arn:aws:secretsmanager:us-east-1:1:secret:x"}`)
	arns := ARNs{Partition: "aws", Region: "us-east-1", Account: "123456789012"}
	f.Fuzz(func(t *testing.T, target, path, body string) {
		reqs, err := Requests(arns, Call{Target: target, Path: path, Method: "POST", Body: []byte(body)}, func(string) string { return "" })
		if err != nil {
			return
		}
		if len(reqs) == 0 { // it would pass unchecked
			t.Fatalf("a call decoded into no permission: %q %q %q", target, path, body)
		}
		for _, r := range reqs {
			if r.Action == "" || r.Resource == "" {
				t.Fatalf("empty request %v from %q %q %q", r, target, path, body)
			}
			// A decoded request is something a policy can decide.
			_ = (iam.Policy{}).Evaluate(r)
		}
	})
}
