package queue

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// AdminAPI is the part of the SQS client CreateQueues uses.
type AdminAPI interface {
	CreateQueue(ctx context.Context, params *sqs.CreateQueueInput, optFns ...func(*sqs.Options)) (*sqs.CreateQueueOutput, error)
	GetQueueAttributes(ctx context.Context, params *sqs.GetQueueAttributesInput, optFns ...func(*sqs.Options)) (*sqs.GetQueueAttributesOutput, error)
}

var _ AdminAPI = (*sqs.Client)(nil)

// QueueSpec describes a delivery queue as the stack defines it (infra).
type QueueSpec struct {
	Name string
	// Visibility is the visibility timeout (whole seconds).
	Visibility time.Duration
	// MaxReceives moves a message to the dead-letter queue <Name>-dlq after
	// that many receives.
	MaxReceives int
}

// CreateQueues creates the queue of spec and its dead-letter queue, for the
// dev server against moto or LocalStack (deployed stacks get theirs from
// CDK). Creating queues that exist with the same attributes is a no-op, so
// it runs at every start. It returns both URLs.
func CreateQueues(ctx context.Context, c AdminAPI, spec QueueSpec) (url, dlqURL string, err error) {
	dlq, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(spec.Name + "-dlq")})
	if err != nil {
		return "", "", fmt.Errorf("queue: creating %s-dlq: %w", spec.Name, err)
	}
	attrs, err := c.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
		QueueUrl: dlq.QueueUrl, AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameQueueArn},
	})
	if err != nil {
		return "", "", fmt.Errorf("queue: reading the ARN of %s-dlq: %w", spec.Name, err)
	}
	redrive, _ := json.Marshal(map[string]string{
		"deadLetterTargetArn": attrs.Attributes[string(types.QueueAttributeNameQueueArn)],
		"maxReceiveCount":     strconv.Itoa(spec.MaxReceives),
	})
	q, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(spec.Name), Attributes: map[string]string{
		string(types.QueueAttributeNameVisibilityTimeout): strconv.Itoa(int(spec.Visibility / time.Second)),
		string(types.QueueAttributeNameRedrivePolicy):     string(redrive),
	}})
	if err != nil {
		return "", "", fmt.Errorf("queue: creating %s: %w", spec.Name, err)
	}
	return aws.ToString(q.QueueUrl), aws.ToString(dlq.QueueUrl), nil
}
