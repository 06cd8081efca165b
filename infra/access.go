package main

import (
	"fmt"
	"slices"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/jsii-runtime-go"

	"github.com/voiceops/opsapi/shared/platform/tables"
)

// Least privilege: each function's role allows the DynamoDB actions its
// code calls, table by table, and a Query on an index only where its code
// queries that index; a queue's sqs:SendMessage, a secret's
// secretsmanager:GetSecretValue and lambda:InvokeFunction on the project
// functions of this account and region, each only where used. What each
// function calls was read from its code path: functions/<name>/main.go,
// the stores it builds, the SDK calls those stores make (shared/store/dynamo).
// A call a transaction makes is checked per item by IAM
// (TransactWriteItems has no action of its own): a Put is
// dynamodb:PutItem, an Update dynamodb:UpdateItem, a Delete
// dynamodb:DeleteItem, a ConditionCheck dynamodb:ConditionCheckItem.
//
// scripts/stack's -unused-grants lists the grants no call of its scenarios
// used; each one is either gone or kept with its reason beside it
// ("unused by the stack scenarios, kept: ...").
//
// Grants that stay broader than the code's calls, and why:
//   - the SQS event sources (dispatcher, dialer, the evaluator's shard
//     queue) get CDK's consume grant (ReceiveMessage, DeleteMessage,
//     ChangeMessageVisibility, GetQueueAttributes, GetQueueUrl): Lambda's
//     poller, not the code, makes those calls with the role (the stack
//     runner's poller makes fewer of them, so some show as unused);
//   - the stream's on-failure destination gets CDK's send grant
//     (SendMessage, GetQueueAttributes, GetQueueUrl): Lambda sends a
//     failed batch's record with the function's role;
//   - the metrics stream's event source gets CDK's stream read grant,
//     with dynamodb:ListStreams on "*" (it has no resource-level
//     permission);
//   - active tracing gets xray:PutTraceSegments and PutTelemetryRecords on
//     "*" (X-Ray has no resource-level permissions; the stack runner sends
//     no traces, so they show as unused);
//   - lambda:InvokeFunction covers every function named
//     ProjectFunctionPrefix* of this account and region: which ones a
//     project uses is data, set by the operator (the scenarios' projects
//     use none, so it shows as unused).

// The DynamoDB actions a function may be granted.
const (
	getItem        = "dynamodb:GetItem"
	putItem        = "dynamodb:PutItem"
	updateItem     = "dynamodb:UpdateItem"
	deleteItem     = "dynamodb:DeleteItem"
	query          = "dynamodb:Query"
	batchGetItem   = "dynamodb:BatchGetItem"
	batchWriteItem = "dynamodb:BatchWriteItem"
	conditionCheck = "dynamodb:ConditionCheckItem"
)

var dynamoActions = []string{getItem, putItem, updateItem, deleteItem, query, batchGetItem, batchWriteItem, conditionCheck}

// Access is what a function does to one table: the DynamoDB actions its
// code calls on the table itself, and the indexes it queries (a Query on
// table/<name>/index/<index>).
type Access struct {
	Table   tables.Table
	Actions []string
	Indexes []string
}

// on is the access of the given actions to t.
func on(t tables.Table, actions ...string) Access { return Access{Table: t, Actions: actions} }

// index adds a Query on t's index name.
func (a Access) index(name string) Access {
	a.Indexes = append(slices.Clone(a.Indexes), name)
	return a
}

// Access patterns that several functions share.
var (
	// requestGuards is the rate limit and the Idempotency-Key records
	// (dynamo.Requests): Begin conditionally puts a record (a refused
	// put returns the record that holds the key: no read), Finish and
	// Take update one. Unused by the stack scenarios, kept: PutItem,
	// the Idempotency-Key of a create-like request (their creates send
	// none).
	requestGuards = on(tables.Requests, putItem, updateItem)
	// rateLimitOnly is the rate limit's bucket alone (Take: UpdateItem),
	// for a function with public routes but no create-like one.
	rateLimitOnly = on(tables.Requests, updateItem)
)

// checkAccess lists what is wrong with a function's table access.
func checkAccess(f Function) []string {
	var out []string
	seen := map[string]bool{}
	for _, a := range f.Tables {
		known := slices.ContainsFunc(tables.All, func(t tables.Table) bool { return t.ID == a.Table.ID })
		if !known {
			out = append(out, fmt.Sprintf("table %q is not in tables.All", a.Table.ID))
			continue
		}
		if seen[a.Table.ID] {
			out = append(out, fmt.Sprintf("table %q is listed twice", a.Table.ID))
		}
		seen[a.Table.ID] = true
		if len(a.Actions) == 0 && len(a.Indexes) == 0 {
			out = append(out, fmt.Sprintf("table %q: no action", a.Table.ID))
		}
		for _, act := range a.Actions {
			if !slices.Contains(dynamoActions, act) {
				out = append(out, fmt.Sprintf("table %q: action %q is not one of %v", a.Table.ID, act, dynamoActions))
			}
		}
		for _, ix := range a.Indexes {
			if !slices.ContainsFunc(a.Table.GSIs, func(g tables.GSI) bool { return g.Name == ix }) {
				out = append(out, fmt.Sprintf("table %q has no index %q", a.Table.ID, ix))
			}
		}
	}
	return out
}

// accessTo returns the function's access to table t, if it has any.
func (f Function) accessTo(t tables.Table) (Access, bool) {
	i := slices.IndexFunc(f.Tables, func(a Access) bool { return a.Table.ID == t.ID })
	if i < 0 {
		return Access{}, false
	}
	return f.Tables[i], true
}

// grantTables gives a function exactly its table access: one statement per
// table with its actions, and one per queried index.
func grantTables(fn awslambda.Function, f Function, tbls map[string]awsdynamodb.Table) {
	for _, a := range f.Tables {
		tbl := tbls[a.Table.ID]
		if len(a.Actions) > 0 {
			fn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
				Actions:   jsii.Strings(a.Actions...),
				Resources: &[]*string{tbl.TableArn()},
			}))
		}
		for _, ix := range a.Indexes {
			fn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
				Actions:   jsii.Strings(query),
				Resources: &[]*string{awscdk.Fn_Join(jsii.String(""), jsii.Strings(*tbl.TableArn(), "/index/"+ix))},
			}))
		}
	}
}

// grantSend allows sqs:SendMessage on a queue: all the code calls
// (GrantSendMessages would add GetQueueAttributes and GetQueueUrl).
func grantSend(fn awslambda.Function, queueArn *string) {
	fn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions: jsii.Strings("sqs:SendMessage"), Resources: &[]*string{queueArn},
	}))
}

// grantSecretValue allows secretsmanager:GetSecretValue on a secret: all
// the code calls (GrantRead would add DescribeSecret).
func grantSecretValue(fn awslambda.Function, secretArn *string) {
	fn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions: jsii.Strings("secretsmanager:GetSecretValue"), Resources: &[]*string{secretArn},
	}))
}

// projectFunctionsArn is the ARN pattern of the Lambda functions projects
// may use as their functions: this account and region only.
func projectFunctionsArn() string {
	return fmt.Sprintf("arn:%s:lambda:%s:%s:function:%s*",
		*awscdk.Aws_PARTITION(), *awscdk.Aws_REGION(), *awscdk.Aws_ACCOUNT_ID(), ProjectFunctionPrefix)
}
