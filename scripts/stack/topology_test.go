package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/voiceops/opsapi/scripts/stack/awsproxy"
	"github.com/voiceops/opsapi/scripts/stack/cfn"
	"github.com/voiceops/opsapi/scripts/stack/esm"
	"github.com/voiceops/opsapi/scripts/stack/iam"
)

// mappingTemplate is a function with a timeout mapped to a queue with a
// visibility timeout.
func mappingTemplate(t *testing.T, timeout, visibility int) (cfn.Template, *cfn.Values, map[string]*function) {
	t.Helper()
	var tmpl cfn.Template
	if err := json.Unmarshal([]byte(`{"Resources":{
		"Q": {"Type":"AWS::SQS::Queue","Properties":{"VisibilityTimeout":`+itoa(visibility)+`}},
		"F": {"Type":"AWS::Lambda::Function","Properties":{"Timeout":`+itoa(timeout)+`}},
		"M": {"Type":"AWS::Lambda::EventSourceMapping","Properties":{"FunctionName":{"Ref":"F"},"EventSourceArn":{"Fn::GetAtt":["Q","Arn"]},"BatchSize":10}}
	}}`), &tmpl); err != nil {
		t.Fatal(err)
	}
	v := cfn.NewValues("123456789012", "us-east-1", "S")
	arn := "arn:aws:sqs:us-east-1:123456789012:S-Q"
	v.Set("Q", "http://moto/S-Q", map[string]string{"Arn": arn})
	fns := map[string]*function{"F": {LogicalID: "F", Name: "dispatcher", Timeout: time.Duration(timeout) * time.Second}}
	return tmpl, v, fns
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// Lambda refuses to map a queue whose visibility timeout is shorter than
// the function's timeout; equal is accepted.
func TestMappingRefusesVisibilityUnderTimeout(t *testing.T) {
	tmpl, v, fns := mappingTemplate(t, 60, 30)
	_, err := readMappings(tmpl, v, fns, map[string]string{"arn:aws:sqs:us-east-1:123456789012:S-Q": "http://moto/S-Q"}, "us-east-1")
	if err == nil || !strings.Contains(err.Error(), "Queue visibility timeout: 30 seconds is less than Function timeout: 60 seconds") {
		t.Fatalf("err = %v, want Lambda's refusal", err)
	}
	tmpl, v, fns = mappingTemplate(t, 60, 60)
	top, err := readMappings(tmpl, v, fns, map[string]string{"arn:aws:sqs:us-east-1:123456789012:S-Q": "http://moto/S-Q"}, "us-east-1")
	if err != nil || len(top.SQS) != 1 {
		t.Fatalf("equal timeouts: %v %+v", err, top)
	}
}

// A mapping whose role cannot poll its queue fails the start, naming the
// action; one that can passes.
func TestCheckMappingsFailsTheStart(t *testing.T) {
	q := "arn:aws:sqs:us-east-1:123456789012:S-Q"
	top := topology{SQS: []esm.SQSMapping{{Function: "dispatcher", QueueARN: q}}}
	policy := func(actions ...string) *awsproxy.Proxy {
		return &awsproxy.Proxy{Principals: map[string]awsproxy.Principal{"K": {Function: "dispatcher",
			Policy: iam.Policy{Statements: []iam.Statement{{Effect: "Allow", Actions: actions, Resource: []string{q}}}}}}}
	}
	err := checkMappings(policy("sqs:ReceiveMessage", "sqs:GetQueueAttributes"), top, nil)
	if err == nil || !strings.Contains(err.Error(), "sqs:DeleteMessage") {
		t.Fatalf("err = %v, want the missing sqs:DeleteMessage", err)
	}
	if err := checkMappings(policy("sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes"), top, nil); err != nil {
		t.Fatalf("a role that can poll: %v", err)
	}
}
