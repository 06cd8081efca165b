package iam

import "testing"

func TestEvaluate(t *testing.T) {
	table := "arn:aws:dynamodb:us-east-1:123456789012:table/voiceops-us-config"
	p := Policy{Statements: []Statement{
		{Effect: "Allow", Actions: []string{"dynamodb:GetItem"}, Resource: []string{table}},
		{Effect: "Allow", Actions: []string{"dynamodb:Query"}, Resource: []string{table, table + "/index/*"}},
		{Effect: "Allow", Actions: []string{"sqs:Send*"}, Resource: []string{"arn:aws:sqs:us-east-1:123456789012:q"}},
		{Effect: "Allow", Actions: []string{"lambda:InvokeFunction"}, Resource: []string{"arn:aws:lambda:us-east-1:*:function:voiceops-fn-*"}},
		{Effect: "Deny", Actions: []string{"dynamodb:Query"}, Resource: []string{table + "/index/secret"}},
	}}
	tests := []struct {
		name string
		req  Request
		want bool
	}{
		{"exact action and table", Request{"dynamodb:GetItem", table}, true},
		{"action names are case-insensitive", Request{"DynamoDB:getitem", table}, true},
		{"an action not granted", Request{"dynamodb:PutItem", table}, false},
		{"another table", Request{"dynamodb:GetItem", "arn:aws:dynamodb:us-east-1:123456789012:table/voiceops-us-calls"}, false},
		{"a table ARN does not cover its indexes", Request{"dynamodb:GetItem", table + "/index/gsi1"}, false},
		{"index wildcard", Request{"dynamodb:Query", table + "/index/gsi1"}, true},
		{"explicit deny wins", Request{"dynamodb:Query", table + "/index/secret"}, false},
		{"action wildcard", Request{"sqs:SendMessage", "arn:aws:sqs:us-east-1:123456789012:q"}, true},
		{"action wildcard does not widen the resource", Request{"sqs:SendMessage", "arn:aws:sqs:us-east-1:123456789012:q2"}, false},
		{"resource wildcards across colons", Request{"lambda:InvokeFunction", "arn:aws:lambda:us-east-1:999999999999:function:voiceops-fn-x"}, true},
		{"resource prefix", Request{"lambda:InvokeFunction", "arn:aws:lambda:us-east-1:999999999999:function:other"}, false},
		{"ARNs are case-sensitive", Request{"dynamodb:GetItem", "arn:aws:dynamodb:us-east-1:123456789012:table/VOICEOPS-us-config"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := p.Evaluate(tt.req).Allowed; got != tt.want {
				t.Errorf("Evaluate(%v) = %v, want %v", tt.req, got, tt.want)
			}
		})
	}
}

func TestEvaluateAllNeedsEveryRequest(t *testing.T) {
	a := "arn:aws:dynamodb:us-east-1:1:table/a"
	b := "arn:aws:dynamodb:us-east-1:1:table/b"
	p := Policy{Statements: []Statement{{Effect: "Allow", Actions: []string{"dynamodb:PutItem", "dynamodb:UpdateItem"}, Resource: []string{a, b}},
		{Effect: "Allow", Actions: []string{"dynamodb:ConditionCheckItem"}, Resource: []string{a}}}}
	ok, _, used := p.EvaluateAll([]Request{{"dynamodb:UpdateItem", a}, {"dynamodb:PutItem", b}, {"dynamodb:ConditionCheckItem", a}})
	if !ok || len(used) != 3 {
		t.Fatalf("EvaluateAll = %v (used %v), want allowed with 3 grants", ok, used)
	}
	ok, refused, _ := p.EvaluateAll([]Request{{"dynamodb:PutItem", a}, {"dynamodb:ConditionCheckItem", b}})
	if ok || refused != (Request{"dynamodb:ConditionCheckItem", b}) {
		t.Fatalf("EvaluateAll = %v refusing %v, want the condition check on b refused", ok, refused)
	}
}

func TestParseDocumentStringOrList(t *testing.T) {
	st, err := ParseDocument([]byte(`{"Statement":[{"Effect":"Allow","Action":"sqs:SendMessage","Resource":["a","b"]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(st) != 1 || len(st[0].Actions) != 1 || len(st[0].Resource) != 2 {
		t.Fatalf("ParseDocument = %+v", st)
	}
	if _, err := ParseDocument([]byte(`{"Statement":[{"Effect":"Allow","Action":7}]}`)); err == nil {
		t.Fatal("a number as Action parsed")
	}
	if got := (Policy{Statements: st}).Grants(); len(got) != 2 {
		t.Fatalf("Grants = %v, want 2", got)
	}
}
