package main

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/jsii-runtime-go"
)

// Bedrock is what the functions that answer Bedrock agents may call:
// Converse on these foundation models, with these guardrails. Both lists
// are empty by default, and then no Bedrock permission is granted: an
// operator names each model a project may use (docs/bedrock-agents.md).
type Bedrock struct {
	Models     []string // foundation model IDs, e.g. anthropic.claude-3-haiku-20240307-v1:0
	Guardrails []string // guardrail IDs
}

var (
	// modelIDPattern is a foundation model's ID: provider.name, no
	// wildcard (an ARN's resource may not widen the grant).
	modelIDPattern = regexp.MustCompile(`^[a-z0-9-]{1,63}\.[a-zA-Z0-9.:_-]{1,200}$`)
	// guardrailIDPattern is Bedrock's guardrail identifier.
	guardrailIDPattern = regexp.MustCompile(`^[a-z0-9]{1,64}$`)
)

// bedrockFromContext reads bedrockModels and bedrockGuardrails (each may
// be given per region as key.<region>): a JSON list in cdk.json, or with
// -c a JSON list or comma-separated IDs.
func bedrockFromContext(c contextReader, region string) (Bedrock, error) {
	var b Bedrock
	var err error
	if b.Models, err = idList(c, "bedrockModels", region, modelIDPattern); err != nil {
		return b, err
	}
	if b.Guardrails, err = idList(c, "bedrockGuardrails", region, guardrailIDPattern); err != nil {
		return b, err
	}
	return b, nil
}

func idList(c contextReader, key, region string, valid *regexp.Regexp) ([]string, error) {
	raw := c.node.TryGetContext(jsii.String(key + "." + region))
	if raw == nil {
		raw = c.node.TryGetContext(jsii.String(key))
	}
	var ids []string
	switch v := raw.(type) {
	case nil:
	case []any:
		for _, x := range v {
			s, ok := x.(string)
			if !ok {
				return nil, fmt.Errorf("context %s: %v is not a string", key, x)
			}
			ids = append(ids, s)
		}
	case string:
		if strings.HasPrefix(strings.TrimSpace(v), "[") {
			if err := json.Unmarshal([]byte(v), &ids); err != nil {
				return nil, fmt.Errorf("context %s: %w", key, err)
			}
		} else {
			for _, s := range strings.Split(v, ",") {
				if s = strings.TrimSpace(s); s != "" {
					ids = append(ids, s)
				}
			}
		}
	default:
		return nil, fmt.Errorf("context %s: want a list of IDs, got %v", key, v)
	}
	for _, id := range ids {
		if !valid.MatchString(id) {
			return nil, fmt.Errorf("context %s: %q is not an ID (%s)", key, id, valid)
		}
	}
	return ids, nil
}

// grantModels lets fn call Converse on b's models, in the stack's region,
// and apply b's guardrails; nothing when b names none.
func grantModels(fn awslambda.Function, b Bedrock) {
	if len(b.Models) > 0 {
		var arns []*string
		for _, m := range b.Models {
			arns = append(arns, jsii.String(fmt.Sprintf("arn:%s:bedrock:%s::foundation-model/%s", *awscdk.Aws_PARTITION(), *awscdk.Aws_REGION(), m)))
		}
		fn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Actions: jsii.Strings("bedrock:InvokeModel"), Resources: &arns,
		}))
	}
	if len(b.Guardrails) > 0 {
		var arns []*string
		for _, g := range b.Guardrails {
			arns = append(arns, jsii.String(fmt.Sprintf("arn:%s:bedrock:%s:%s:guardrail/%s", *awscdk.Aws_PARTITION(), *awscdk.Aws_REGION(), *awscdk.Aws_ACCOUNT_ID(), g)))
		}
		fn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Actions: jsii.Strings("bedrock:ApplyGuardrail"), Resources: &arns,
		}))
	}
}
