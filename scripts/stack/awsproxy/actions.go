package awsproxy

import (
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strings"

	"github.com/voiceops/opsapi/scripts/stack/iam"
)

// ARNs builds the ARNs of the resources a call names, in one account and
// region.
type ARNs struct {
	Partition, Region, Account string
}

func (a ARNs) Table(name string) string {
	return fmt.Sprintf("arn:%s:dynamodb:%s:%s:table/%s", a.Partition, a.Region, a.Account, name)
}

func (a ARNs) Queue(name string) string {
	return fmt.Sprintf("arn:%s:sqs:%s:%s:%s", a.Partition, a.Region, a.Account, name)
}

func (a ARNs) Function(name string) string {
	return fmt.Sprintf("arn:%s:lambda:%s:%s:function:%s", a.Partition, a.Region, a.Account, name)
}

// FoundationModel is a Bedrock foundation model's ARN (no account).
func (a ARNs) FoundationModel(id string) string {
	return fmt.Sprintf("arn:%s:bedrock:%s::foundation-model/%s", a.Partition, a.Region, id)
}

// Guardrail is a Bedrock guardrail's ARN.
func (a ARNs) Guardrail(id string) string {
	return fmt.Sprintf("arn:%s:bedrock:%s:%s:guardrail/%s", a.Partition, a.Region, a.Account, id)
}

// IsBedrock reports whether a call is to Bedrock Runtime (its REST API).
func IsBedrock(path string) bool { return strings.HasPrefix(path, "/model/") }

// Secret returns the ARN of a secret named by ARN or by name; lookup maps a
// name to its ARN (Secrets Manager adds a random suffix).
func (a ARNs) Secret(id string, lookup func(string) string) string {
	if strings.HasPrefix(id, "arn:") {
		return id
	}
	if arn := lookup(id); arn != "" {
		return arn
	}
	return fmt.Sprintf("arn:%s:secretsmanager:%s:%s:secret:%s", a.Partition, a.Region, a.Account, id)
}

// Call is one AWS API call as the proxy sees it.
type Call struct {
	Target string // X-Amz-Target, e.g. DynamoDB_20120810.PutItem
	Path   string // URL path (Lambda's REST API)
	Method string
	Body   []byte
}

// Requests returns the permissions a call needs, as AWS checks them. A
// DynamoDB transaction needs each item's own action on its table; a batch
// needs the batch action on every table it names; a Query or Scan of an
// index needs the action on the index's ARN.
func Requests(arns ARNs, c Call, secretARN func(string) string) ([]iam.Request, error) {
	if strings.HasPrefix(c.Path, "/2015-03-31/functions/") {
		name, err := url.PathUnescape(strings.TrimSuffix(strings.TrimPrefix(c.Path, "/2015-03-31/functions/"), "/invocations"))
		if err != nil {
			return nil, err
		}
		if i := strings.LastIndex(name, ":function:"); i >= 0 { // an ARN
			name = name[i+len(":function:"):]
		}
		name, _, _ = strings.Cut(name, ":") // a qualifier
		return []iam.Request{{Action: "lambda:InvokeFunction", Resource: arns.Function(name)}}, nil
	}
	if IsBedrock(c.Path) {
		return bedrockRequests(arns, c)
	}
	prefix, op, ok := strings.Cut(c.Target, ".")
	if !ok {
		return nil, fmt.Errorf("no X-Amz-Target in a %s %s call", c.Method, c.Path)
	}
	var body map[string]json.RawMessage
	if len(c.Body) > 0 {
		if err := json.Unmarshal(c.Body, &body); err != nil {
			return nil, fmt.Errorf("%s: body is not JSON: %w", c.Target, err)
		}
	}
	str := func(k string) string {
		var s string
		_ = json.Unmarshal(body[k], &s)
		return s
	}
	switch {
	case strings.HasPrefix(prefix, "DynamoDBStreams_"):
		stream := str("StreamArn")
		if stream == "" { // GetRecords names a shard iterator, which names no ARN we can read
			stream = "*"
		}
		return []iam.Request{{Action: "dynamodb:" + op, Resource: stream}}, nil
	case strings.HasPrefix(prefix, "DynamoDB_"):
		return dynamoRequests(arns, op, body, str)
	case prefix == "AmazonSQS":
		q := str("QueueUrl")
		if q == "" {
			// CreateQueue, GetQueueUrl, ListQueues name a queue by name.
			return []iam.Request{{Action: "sqs:" + op, Resource: arns.Queue(str("QueueName"))}}, nil
		}
		return []iam.Request{{Action: "sqs:" + op, Resource: arns.Queue(q[strings.LastIndex(q, "/")+1:])}}, nil
	case prefix == "secretsmanager":
		return []iam.Request{{Action: "secretsmanager:" + op, Resource: arns.Secret(str("SecretId"), secretARN)}}, nil
	}
	return nil, fmt.Errorf("unknown service of X-Amz-Target %q", c.Target)
}

func dynamoRequests(arns ARNs, op string, body map[string]json.RawMessage, str func(string) string) ([]iam.Request, error) {
	switch op {
	case "TransactWriteItems", "TransactGetItems":
		var items []map[string]struct {
			TableName string
		}
		if err := json.Unmarshal(body["TransactItems"], &items); err != nil {
			return nil, fmt.Errorf("%s: TransactItems: %w", op, err)
		}
		actions := map[string]string{"Put": "PutItem", "Update": "UpdateItem", "Delete": "DeleteItem", "ConditionCheck": "ConditionCheckItem", "Get": "GetItem"}
		var out []iam.Request
		for i, it := range items {
			if len(it) != 1 {
				return nil, fmt.Errorf("%s: item %d has %d operations", op, i, len(it))
			}
			for kind, v := range it {
				a, ok := actions[kind]
				if !ok {
					return nil, fmt.Errorf("%s: item %d: unknown operation %q", op, i, kind)
				}
				out = append(out, iam.Request{Action: "dynamodb:" + a, Resource: arns.Table(v.TableName)})
			}
		}
		if len(out) == 0 { // nothing to authorize would let it through unchecked
			return nil, fmt.Errorf("%s: no items", op)
		}
		return out, nil
	case "BatchWriteItem", "BatchGetItem":
		var items map[string]json.RawMessage
		if err := json.Unmarshal(body["RequestItems"], &items); err != nil {
			return nil, fmt.Errorf("%s: RequestItems: %w", op, err)
		}
		names := make([]string, 0, len(items))
		for name := range items {
			names = append(names, name)
		}
		sort.Strings(names)
		var out []iam.Request
		for _, name := range names {
			out = append(out, iam.Request{Action: "dynamodb:" + op, Resource: arns.Table(name)})
		}
		if len(out) == 0 {
			return nil, fmt.Errorf("%s: no tables", op)
		}
		return out, nil
	}
	table := str("TableName")
	if table == "" {
		if op == "ListTables" {
			return []iam.Request{{Action: "dynamodb:ListTables", Resource: "*"}}, nil
		}
		return nil, fmt.Errorf("dynamodb:%s names no TableName", op)
	}
	res := arns.Table(table)
	if idx := str("IndexName"); idx != "" {
		res += "/index/" + idx
	}
	return []iam.Request{{Action: "dynamodb:" + op, Resource: res}}, nil
}

// bedrockRequests is what Converse needs: bedrock:InvokeModel on the model,
// and bedrock:ApplyGuardrail on the guardrail it names (a guardrail
// named by ARN is taken as it is). Other Bedrock calls are refused: no
// function makes them.
func bedrockRequests(arns ARNs, c Call) ([]iam.Request, error) {
	rest := strings.TrimPrefix(c.Path, "/model/")
	id, ok := strings.CutSuffix(rest, "/converse")
	if !ok || c.Method != "POST" {
		return nil, fmt.Errorf("bedrock-runtime: %s %s is not Converse", c.Method, c.Path)
	}
	id, err := url.PathUnescape(id)
	if err != nil || id == "" || strings.Contains(id, "/") {
		return nil, fmt.Errorf("bedrock-runtime: no model ID in %s", c.Path)
	}
	model := arns.FoundationModel(id)
	if strings.HasPrefix(id, "arn:") {
		model = id
	}
	reqs := []iam.Request{{Action: "bedrock:InvokeModel", Resource: model}}
	var body struct {
		GuardrailConfig *struct {
			GuardrailIdentifier string `json:"guardrailIdentifier"`
		} `json:"guardrailConfig"`
	}
	if len(c.Body) > 0 {
		if err := json.Unmarshal(c.Body, &body); err != nil {
			return nil, fmt.Errorf("bedrock-runtime: body is not JSON: %w", err)
		}
	}
	if g := body.GuardrailConfig; g != nil && g.GuardrailIdentifier != "" {
		arn := g.GuardrailIdentifier
		if !strings.HasPrefix(arn, "arn:") {
			arn = arns.Guardrail(arn)
		}
		reqs = append(reqs, iam.Request{Action: "bedrock:ApplyGuardrail", Resource: arn})
	}
	return reqs, nil
}
