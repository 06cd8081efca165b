package main

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/voiceops/opsapi/shared/platform/tables"
)

// grant is one action an Allow statement gives on one resource, named by
// what it is: table:<id>, table:<id>/index/<name>, stream:<id>,
// queue:<construct>, secret:<name>, or the ARN (pseudo parameters as
// ${Partition}, ${Region}, ${AccountId}), or "*".
type grant struct{ action, resource string }

func (g grant) String() string { return g.action + " on " + g.resource }

var logicalSuffix = regexp.MustCompile(`[0-9A-F]{8}$`)

// resourceName names a policy statement's resource.
func resourceName(tmpl map[string]any, v any) string {
	all := tmpl["Resources"].(map[string]any)
	named := func(id, attr string) string {
		res, _ := all[id].(map[string]any)
		p := props(res)
		switch res["Type"] {
		case "AWS::DynamoDB::Table":
			for _, t := range tables.All {
				if strings.HasSuffix(fmt.Sprint(p["TableName"]), "-"+t.ID) {
					if attr == "StreamArn" {
						return "stream:" + t.ID
					}
					return "table:" + t.ID
				}
			}
		case "AWS::SQS::Queue":
			return "queue:" + logicalSuffix.ReplaceAllString(id, "")
		case "AWS::Lambda::Function": // "VoiceOps <name> (<region>)"
			if f := strings.Fields(fmt.Sprint(p["Description"])); len(f) == 3 {
				return "function:" + f[1]
			}
		case "AWS::SecretsManager::Secret":
			name := fmt.Sprint(p["Name"])
			return "secret:" + name[strings.LastIndex(name, "/")+1:]
		}
		return id + "." + attr
	}
	switch v := v.(type) {
	case string:
		return v
	case map[string]any:
		if ga, ok := v["Fn::GetAtt"].([]any); ok {
			return named(fmt.Sprint(ga[0]), fmt.Sprint(ga[1]))
		}
		if ref, ok := v["Ref"].(string); ok {
			if strings.HasPrefix(ref, "AWS::") {
				return "${" + strings.TrimPrefix(ref, "AWS::") + "}"
			}
			return named(ref, "Ref")
		}
		if join, ok := v["Fn::Join"].([]any); ok {
			var b strings.Builder
			for _, part := range join[1].([]any) {
				b.WriteString(resourceName(tmpl, part))
			}
			return b.String()
		}
	}
	raw, _ := json.Marshal(v)
	return string(raw)
}

// roleGrants lists every grant of the policies attached to the role with
// logical ID role.
func roleGrants(tmpl map[string]any, role string) []grant {
	var out []grant
	for _, pol := range resources(tmpl, "AWS::IAM::Policy") {
		roles, _ := json.Marshal(props(pol)["Roles"])
		if !strings.Contains(string(roles), `{"Ref":"`+role+`"}`) {
			continue
		}
		doc, _ := props(pol)["PolicyDocument"].(map[string]any)
		for _, st := range doc["Statement"].([]any) {
			st := st.(map[string]any)
			if st["Effect"] != "Allow" {
				continue
			}
			actions, rs := st["Action"], st["Resource"]
			if a, ok := actions.(string); ok {
				actions = []any{a}
			}
			if _, ok := rs.([]any); !ok {
				rs = []any{rs}
			}
			for _, a := range actions.([]any) {
				for _, r := range rs.([]any) {
					out = append(out, grant{fmt.Sprint(a), resourceName(tmpl, r)})
				}
			}
		}
	}
	return out
}

// sqsConsume is what CDK's SQS event source grants its function (access.go
// says why it stays).
var sqsConsume = []string{"sqs:ReceiveMessage", "sqs:ChangeMessageVisibility", "sqs:GetQueueUrl", "sqs:DeleteMessage", "sqs:GetQueueAttributes"}

// wantGrants is every grant a function's role must have, from its entry.
func wantGrants(f Function) []grant {
	var out []grant
	add := func(resource string, actions ...string) {
		for _, a := range actions {
			out = append(out, grant{a, resource})
		}
	}
	for _, a := range f.Tables {
		add("table:"+a.Table.ID, a.Actions...)
		for _, ix := range a.Indexes {
			add("table:"+a.Table.ID+"/index/"+ix, query)
		}
	}
	if f.SendsToQueue {
		add("queue:DeliveryQueue", "sqs:SendMessage")
	}
	if f.SendsToOutbound {
		add("queue:OutboundQueue", "sqs:SendMessage")
	}
	if f.Queue != nil {
		q := "queue:DeliveryQueue"
		if f.Queue.Outbound {
			q = "queue:OutboundQueue"
		}
		add(q, sqsConsume...)
	}
	if f.ShardFanout {
		add("queue:EvaluatorShardQueue", "sqs:SendMessage")
		add("queue:EvaluatorShardQueue", sqsConsume...)
	}
	if f.MetricsStream {
		add("*", "dynamodb:ListStreams")
		add("stream:metrics", "dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator")
		add("queue:MetricsStreamFailures", "sqs:SendMessage", "sqs:GetQueueAttributes", "sqs:GetQueueUrl")
	}
	if f.InvokesProjectFunctions {
		add("arn:${Partition}:lambda:${Region}:${AccountId}:function:"+ProjectFunctionPrefix+"*", "lambda:InvokeFunction")
	}
	if f.InvokesItself {
		add("function:"+f.Name, "lambda:InvokeFunction")
	}
	if f.ReadsInternalKey {
		add("secret:internal-metric-key", "secretsmanager:GetSecretValue")
	}
	if f.ReadsTwilio {
		add("secret:twilio-accounts", "secretsmanager:GetSecretValue")
	}
	add("*", "xray:PutTraceSegments", "xray:PutTelemetryRecords")
	return out
}

func sortedGrants(gs []grant) []string {
	var out []string
	for _, g := range gs {
		out = append(out, g.String())
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// TestEachRoleHasExactlyItsFunctionsGrants reads every function's role
// policies from the template: they are exactly what its entry lists (the
// DynamoDB actions and index queries its code makes, the queues it sends
// to, the secrets it reads, its project functions, and the grants its
// event sources and tracing bring), nothing more.
func TestEachRoleHasExactlyItsFunctionsGrants(t *testing.T) {
	for _, r := range Regions {
		name := "VoiceOps-" + r.Name
		tmpl := defaultSynth(t).json[name]
		for _, f := range Functions {
			_, fn := functionResource(t, tmpl, f.Name)
			got, want := sortedGrants(roleGrants(tmpl, getAttTarget(props(fn)["Role"]))), sortedGrants(wantGrants(f))
			for _, g := range got {
				if !slices.Contains(want, g) {
					t.Errorf("%s %s: role allows %s, which its entry does not list", name, f.Name, g)
				}
			}
			for _, g := range want {
				if !slices.Contains(got, g) {
					t.Errorf("%s %s: role lacks %s", name, f.Name, g)
				}
			}
		}
	}
}

// TestLeastPrivilege pins what the code reading found (infra/access.go):
// no function may Scan, BatchGetItem goes only to the conversations list
// (a page's turns by key), DeleteItem only to the functions that delete
// rules or endpoints or write turns (a turn whose commit is refused),
// index queries only to the functions that query an index, no
// DescribeSecret, and project functions only of this account and region.
func TestLeastPrivilege(t *testing.T) {
	tmpl := defaultSynth(t).json["VoiceOps-us"]
	deletes, batchGets, indexes := map[string]bool{}, map[string]bool{}, map[string][]string{}
	for _, f := range Functions {
		_, fn := functionResource(t, tmpl, f.Name)
		for _, g := range roleGrants(tmpl, getAttTarget(props(fn)["Role"])) {
			switch {
			case g.action == "dynamodb:Scan" || g.action == "secretsmanager:DescribeSecret":
				t.Errorf("%s: %s", f.Name, g)
			case g.action == batchGetItem:
				batchGets[f.Name+" "+g.resource] = true
			case g.action == deleteItem:
				deletes[f.Name] = true
			case strings.Contains(g.resource, "/index/"):
				indexes[f.Name] = append(indexes[f.Name], g.resource)
			case g.action == "lambda:InvokeFunction" && g.resource == "function:"+f.Name && f.InvokesItself:
				// its own steps' invocations
			case g.action == "lambda:InvokeFunction" && !strings.Contains(g.resource, ":${AccountId}:"):
				t.Errorf("%s: %s: any account", f.Name, g)
			case strings.Contains(g.resource, "*") && g.resource != "*" && !strings.HasPrefix(g.action, "lambda:"):
				t.Errorf("%s: %s: a wildcard", f.Name, g)
			}
		}
	}
	if want := map[string]bool{"alerts": true, "webhooks": true, "chat": true, "calls": true}; fmt.Sprint(deletes) != fmt.Sprint(want) {
		t.Errorf("DeleteItem goes to %v, want %v (rules and endpoints are deleted; turns not committed)", deletes, want)
	}
	if want := map[string]bool{"conversations table:conversations": true}; fmt.Sprint(batchGets) != fmt.Sprint(want) {
		t.Errorf("BatchGetItem goes to %v, want %v (a page's turns)", batchGets, want)
	}
	want := map[string][]string{
		"evaluator":     {"table:config/index/gsi1", "table:deliveries/index/gsi1"},           // a shard's rules; pending events
		"webhooks":      {"table:deliveries/index/gsi1"},                                      // the delivery log
		"sweeper":       {"table:conversations/index/idle", "table:conversations/index/open"}, // due conversations (open: written before idle)
		"conversations": {"table:conversations/index/turns"},                                  // a list page's turns
	}
	for _, v := range indexes {
		slices.Sort(v)
	}
	if fmt.Sprint(indexes) != fmt.Sprint(want) {
		t.Errorf("index queries: %v, want %v", indexes, want)
	}
}

// TestStepsInvokeTheirOwnFunction: the calls function alone may invoke
// itself (its voice steps' asynchronous runs), and those runs are neither
// retried by Lambda nor kept past a minute: a failed step is recovered by
// its lease, never run beside its takeover.
func TestStepsInvokeTheirOwnFunction(t *testing.T) {
	tmpl := defaultSynth(t).json["VoiceOps-us"]
	var selfInvoking []string
	for _, f := range Functions {
		if f.InvokesItself {
			selfInvoking = append(selfInvoking, f.Name)
		}
	}
	if fmt.Sprint(selfInvoking) != "[calls]" {
		t.Fatalf("functions that invoke themselves: %v, want [calls]", selfInvoking)
	}
	id, fn := functionResource(t, tmpl, "calls")
	if !slices.Contains(roleGrants(tmpl, getAttTarget(props(fn)["Role"])), grant{"lambda:InvokeFunction", "function:calls"}) {
		t.Errorf("the calls function may not invoke itself")
	}
	found := false
	for _, c := range resources(tmpl, "AWS::Lambda::EventInvokeConfig") {
		p := props(c)
		if fmt.Sprint(p["FunctionName"]) != fmt.Sprint(map[string]any{"Ref": id}) {
			continue
		}
		found = true
		if fmt.Sprint(p["MaximumRetryAttempts"]) != "0" || fmt.Sprint(p["MaximumEventAgeInSeconds"]) != "60" {
			t.Errorf("calls' asynchronous invocations: %v, want no retry and at most 60 s in the queue", p)
		}
	}
	if !found {
		t.Errorf("calls has no EventInvokeConfig")
	}
}
