// Package deploy creates a template's stateful resources on an AWS
// emulation (moto) from the template's own properties: DynamoDB tables
// (keys, indexes, stream, TTL), SQS queues (visibility timeout, retention,
// redrive policy) and Secrets Manager secrets (generated values). It records
// each resource's physical values (Ref, Fn::GetAtt) for the rest of the
// template to resolve against.
package deploy

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"sort"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	dtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/voiceops/opsapi/scripts/stack/cfn"
	"github.com/voiceops/opsapi/scripts/stack/sns"
)

// Clients are the emulator's clients.
type Clients struct {
	DynamoDB       *dynamodb.Client
	SQS            *sqs.Client
	SecretsManager *secretsmanager.Client
	SNS            sns.Client
}

// Stack creates the stateful resources of t and fills v. Other resource
// kinds are left to the caller (functions, APIs, mappings).
func Stack(ctx context.Context, c Clients, t cfn.Template, stackName string, v *cfn.Values) error {
	pending := map[string]cfn.Resource{}
	for id, r := range t.Resources {
		switch r.Type {
		case "AWS::DynamoDB::Table", "AWS::SQS::Queue", "AWS::SecretsManager::Secret", "AWS::SNS::Topic", "AWS::SNS::Subscription":
			pending[id] = r
		}
	}
	// Resources refer to each other (a queue to its DLQ): create in passes
	// until nothing is left or nothing resolves.
	for len(pending) > 0 {
		ids := make([]string, 0, len(pending))
		for id := range pending {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		progress := false
		var lastErr error
		for _, id := range ids {
			r := pending[id]
			props, err := v.Resolve(map[string]any(r.Properties))
			if errors.Is(err, cfn.ErrUnresolved) {
				lastErr = err
				continue
			}
			if err != nil {
				return fmt.Errorf("%s: %w", id, err)
			}
			p := props.(map[string]any)
			switch r.Type {
			case "AWS::DynamoDB::Table":
				err = table(ctx, c.DynamoDB, id, p, v)
			case "AWS::SQS::Queue":
				err = queue(ctx, c.SQS, stackName, id, p, v)
			case "AWS::SecretsManager::Secret":
				err = secret(ctx, c.SecretsManager, stackName, id, p, v)
			case "AWS::SNS::Topic":
				err = topic(ctx, c.SNS, stackName, id, p, v)
			case "AWS::SNS::Subscription":
				err = subscription(ctx, c.SNS, id, p, v)
			}
			if err != nil {
				return fmt.Errorf("%s (%s): %w", id, r.Type, err)
			}
			delete(pending, id)
			progress = true
		}
		if !progress {
			return fmt.Errorf("resources that refer to nothing created: %w", lastErr)
		}
	}
	return nil
}

// decode re-reads resolved properties into an SDK input (the template's
// names are the API's, so JSON carries them across).
func decode(p map[string]any, dst any) error {
	b, err := json.Marshal(p)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, dst)
}

func table(ctx context.Context, db *dynamodb.Client, id string, p map[string]any, v *cfn.Values) error {
	var props struct {
		TableName               string
		AttributeDefinitions    []dtypes.AttributeDefinition
		KeySchema               []dtypes.KeySchemaElement
		GlobalSecondaryIndexes  []dtypes.GlobalSecondaryIndex
		LocalSecondaryIndexes   []dtypes.LocalSecondaryIndex
		BillingMode             dtypes.BillingMode
		StreamSpecification     *struct{ StreamViewType dtypes.StreamViewType }
		TimeToLiveSpecification *struct {
			AttributeName string
			Enabled       bool
		}
	}
	if err := decode(p, &props); err != nil {
		return err
	}
	if props.TableName == "" {
		return fmt.Errorf("the runner needs a TableName (the functions get it from the template)")
	}
	in := &dynamodb.CreateTableInput{
		TableName: &props.TableName, AttributeDefinitions: props.AttributeDefinitions, KeySchema: props.KeySchema,
		GlobalSecondaryIndexes: props.GlobalSecondaryIndexes, LocalSecondaryIndexes: props.LocalSecondaryIndexes,
		BillingMode: props.BillingMode,
	}
	if in.BillingMode == "" {
		in.BillingMode = dtypes.BillingModePayPerRequest
	}
	if s := props.StreamSpecification; s != nil {
		in.StreamSpecification = &dtypes.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: s.StreamViewType}
	}
	out, err := db.CreateTable(ctx, in)
	var inUse *dtypes.ResourceInUseException
	var desc *dtypes.TableDescription
	switch {
	case errors.As(err, &inUse):
		d, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: &props.TableName})
		if err != nil {
			return err
		}
		desc = d.Table
	case err != nil:
		return err
	default:
		desc = out.TableDescription
	}
	if ttl := props.TimeToLiveSpecification; ttl != nil && ttl.Enabled {
		if _, err := db.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{TableName: &props.TableName,
			TimeToLiveSpecification: &dtypes.TimeToLiveSpecification{AttributeName: &ttl.AttributeName, Enabled: aws.Bool(true)}}); err != nil &&
			!strings.Contains(err.Error(), "already enabled") {
			return fmt.Errorf("TTL: %w", err)
		}
	}
	attrs := map[string]string{"Arn": aws.ToString(desc.TableArn)}
	if desc.LatestStreamArn != nil {
		attrs["StreamArn"] = *desc.LatestStreamArn
	}
	v.Set(id, props.TableName, attrs)
	return nil
}

func queue(ctx context.Context, q *sqs.Client, stackName, id string, p map[string]any, v *cfn.Values) error {
	name, _ := p["QueueName"].(string)
	if name == "" {
		name = stackName + "-" + id // CloudFormation's generated names look alike
	}
	attrs := map[string]string{}
	for _, k := range []string{"VisibilityTimeout", "MessageRetentionPeriod", "DelaySeconds", "MaximumMessageSize", "ReceiveMessageWaitTimeSeconds"} {
		switch x := p[k].(type) {
		case float64:
			attrs[k] = strconv.FormatFloat(x, 'f', -1, 64)
		case string:
			attrs[k] = x
		}
	}
	if rp, ok := p["RedrivePolicy"]; ok {
		b, err := json.Marshal(rp)
		if err != nil {
			return err
		}
		attrs["RedrivePolicy"] = string(b)
	}
	if fifo, _ := p["FifoQueue"].(bool); fifo {
		attrs["FifoQueue"] = "true"
	}
	out, err := q.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: &name, Attributes: attrs})
	if err != nil {
		return err
	}
	ga, err := q.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: out.QueueUrl, AttributeNames: []sqstypes.QueueAttributeName{"QueueArn"}})
	if err != nil {
		return err
	}
	v.Set(id, *out.QueueUrl, map[string]string{"Arn": ga.Attributes["QueueArn"], "QueueName": name, "QueueUrl": *out.QueueUrl})
	return nil
}

func secret(ctx context.Context, sm *secretsmanager.Client, stackName, id string, p map[string]any, v *cfn.Values) error {
	var props struct {
		Name                 string
		SecretString         string
		GenerateSecretString *struct {
			PasswordLength       int
			ExcludePunctuation   bool
			ExcludeCharacters    string
			SecretStringTemplate string
			GenerateStringKey    string
		}
	}
	if err := decode(p, &props); err != nil {
		return err
	}
	if props.Name == "" {
		props.Name = stackName + "-" + id
	}
	value := props.SecretString
	if g := props.GenerateSecretString; g != nil {
		n := g.PasswordLength
		if n == 0 {
			n = 32 // Secrets Manager's default
		}
		pw, err := password(n, g.ExcludePunctuation, g.ExcludeCharacters)
		if err != nil {
			return err
		}
		value = pw
		if g.GenerateStringKey != "" {
			obj := map[string]any{}
			if g.SecretStringTemplate != "" {
				if err := json.Unmarshal([]byte(g.SecretStringTemplate), &obj); err != nil {
					return fmt.Errorf("SecretStringTemplate: %w", err)
				}
			}
			obj[g.GenerateStringKey] = pw
			b, _ := json.Marshal(obj)
			value = string(b)
		}
	}
	out, err := sm.CreateSecret(ctx, &secretsmanager.CreateSecretInput{Name: &props.Name, SecretString: &value})
	if err != nil {
		if !strings.Contains(err.Error(), "ResourceExists") {
			return err
		}
		d, err := sm.DescribeSecret(ctx, &secretsmanager.DescribeSecretInput{SecretId: &props.Name})
		if err != nil {
			return err
		}
		v.Set(id, aws.ToString(d.ARN), map[string]string{"Id": aws.ToString(d.ARN), "Name": props.Name})
		return nil
	}
	v.Set(id, aws.ToString(out.ARN), map[string]string{"Id": aws.ToString(out.ARN), "Name": props.Name})
	return nil
}

func topic(ctx context.Context, c sns.Client, stackName, id string, p map[string]any, v *cfn.Values) error {
	name, _ := p["TopicName"].(string)
	if name == "" {
		name = stackName + "-" + id
	}
	arn, err := c.CreateTopic(ctx, name)
	if err != nil {
		return err
	}
	v.Set(id, arn, map[string]string{"TopicArn": arn, "TopicName": name})
	return nil
}

// subscription subscribes an SQS queue; other protocols (email, https)
// reach nothing on this machine and are only named.
func subscription(ctx context.Context, c sns.Client, id string, p map[string]any, v *cfn.Values) error {
	protocol, _ := p["Protocol"].(string)
	topicARN, _ := p["TopicArn"].(string)
	endpoint, _ := p["Endpoint"].(string)
	if protocol != "sqs" {
		v.Set(id, topicARN+":"+id, map[string]string{})
		return nil
	}
	attrs := map[string]string{}
	if raw, ok := p["RawMessageDelivery"]; ok {
		attrs["RawMessageDelivery"] = fmt.Sprint(raw)
	}
	arn, err := c.Subscribe(ctx, topicARN, protocol, endpoint, attrs)
	if err != nil {
		return err
	}
	v.Set(id, arn, map[string]string{})
	return nil
}

// Topics creates the topics an alarm names by ARN that the template does
// not create (context alarmTopicArn names an existing one): on moto they
// exist only if made, in the ARN's region.
func Topics(ctx context.Context, c sns.Client, arns []string) error {
	for _, arn := range arns {
		if !strings.HasPrefix(arn, "arn:aws:sns:") {
			continue
		}
		rc := c
		if r := sns.Region(arn); r != "" {
			rc.Region = r
		}
		got, err := rc.CreateTopic(ctx, sns.TopicName(arn))
		if err != nil {
			return fmt.Errorf("topic %s: %w", arn, err)
		}
		if got != arn {
			return fmt.Errorf("topic %s: moto made %s (another account)", arn, got)
		}
	}
	return nil
}

// password draws n characters as Secrets Manager's generator does.
func password(n int, noPunct bool, exclude string) (string, error) {
	chars := "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	if !noPunct {
		chars += "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"
	}
	var set []rune
	for _, c := range chars {
		if !strings.ContainsRune(exclude, c) {
			set = append(set, c)
		}
	}
	var b strings.Builder
	for range n {
		i, err := rand.Int(rand.Reader, big.NewInt(int64(len(set))))
		if err != nil {
			return "", err
		}
		b.WriteRune(set[i.Int64()])
	}
	return b.String(), nil
}
