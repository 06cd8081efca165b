package dynamo

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"

	"github.com/voiceops/opsapi/shared/platform/tables"
)

// TableAdmin is the part of the DynamoDB client CreateTables uses.
type TableAdmin interface {
	CreateTable(ctx context.Context, params *dynamodb.CreateTableInput, optFns ...func(*dynamodb.Options)) (*dynamodb.CreateTableOutput, error)
	DescribeTable(ctx context.Context, params *dynamodb.DescribeTableInput, optFns ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error)
	UpdateTimeToLive(ctx context.Context, params *dynamodb.UpdateTimeToLiveInput, optFns ...func(*dynamodb.Options)) (*dynamodb.UpdateTimeToLiveOutput, error)
}

// ttlDescriber is implemented by *dynamodb.Client; when the admin has it,
// CreateTables leaves a TTL that is already on alone instead of asking
// again (DynamoDB refuses to enable it twice).
type ttlDescriber interface {
	DescribeTimeToLive(ctx context.Context, params *dynamodb.DescribeTimeToLiveInput, optFns ...func(*dynamodb.Options)) (*dynamodb.DescribeTimeToLiveOutput, error)
}

// streamUpdater is implemented by *dynamodb.Client; with it CreateTables
// turns on the stream of a table made before the definition had one.
type streamUpdater interface {
	UpdateTable(ctx context.Context, params *dynamodb.UpdateTableInput, optFns ...func(*dynamodb.Options)) (*dynamodb.UpdateTableOutput, error)
}

var _ interface {
	TableAdmin
	ttlDescriber
	streamUpdater
} = (*dynamodb.Client)(nil)

// tableWait bounds how long CreateTables waits for a table to be ACTIVE
// when ctx has no earlier deadline.
const tableWait = 5 * time.Minute

// CreateTables creates every table of tables.All that does not exist yet,
// as defined there (on-demand billing, string keys, GSIs projecting every
// attribute), waits until each is ACTIVE and turns TTL on. Existing tables
// are left as they are, so it is safe to call on every start of the dev
// server against LocalStack or moto.
func CreateTables(ctx context.Context, c TableAdmin, names TableNames) error {
	ctx, cancel := context.WithTimeout(ctx, tableWait)
	defer cancel()
	for _, t := range tables.All {
		name := names.Of(t)
		if name == "" {
			return fmt.Errorf("dynamo: CreateTables: no name for table %q", t.ID)
		}
		if err := createTable(ctx, c, name, t); err != nil {
			return fmt.Errorf("dynamo: create table %s: %w", name, err)
		}
	}
	for _, t := range tables.All {
		name := names.Of(t)
		if err := waitActive(ctx, c, name); err != nil {
			return fmt.Errorf("dynamo: wait for table %s: %w", name, err)
		}
		if t.TTLAttribute != "" {
			if err := enableTTL(ctx, c, name, t.TTLAttribute); err != nil {
				return fmt.Errorf("dynamo: enable TTL on %s: %w", name, err)
			}
		}
	}
	return nil
}

// createTableInput returns the request that creates t under name.
func createTableInput(name string, t tables.Table) *dynamodb.CreateTableInput {
	var defs []types.AttributeDefinition
	seen := map[string]bool{}
	keySchema := func(pk, sk string) []types.KeySchemaElement {
		ks := []types.KeySchemaElement{{AttributeName: aws.String(pk), KeyType: types.KeyTypeHash}}
		if sk != "" {
			ks = append(ks, types.KeySchemaElement{AttributeName: aws.String(sk), KeyType: types.KeyTypeRange})
		}
		for _, a := range []string{pk, sk} {
			if a != "" && !seen[a] {
				seen[a] = true
				defs = append(defs, types.AttributeDefinition{AttributeName: aws.String(a), AttributeType: types.ScalarAttributeTypeS})
			}
		}
		return ks
	}
	in := &dynamodb.CreateTableInput{
		TableName:   aws.String(name),
		BillingMode: types.BillingModePayPerRequest,
		KeySchema:   keySchema(t.PartitionKey, t.SortKey),
	}
	for _, g := range t.GSIs {
		projection := types.ProjectionTypeAll
		if g.KeysOnly {
			projection = types.ProjectionTypeKeysOnly
		}
		in.GlobalSecondaryIndexes = append(in.GlobalSecondaryIndexes, types.GlobalSecondaryIndex{
			IndexName:  aws.String(g.Name),
			KeySchema:  keySchema(g.PartitionKey, g.SortKey),
			Projection: &types.Projection{ProjectionType: projection},
		})
	}
	in.AttributeDefinitions = defs
	if t.Stream != "" {
		in.StreamSpecification = &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewType(t.Stream)}
	}
	return in
}

func createTable(ctx context.Context, c TableAdmin, name string, t tables.Table) error {
	out, err := c.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)})
	var notFound *types.ResourceNotFoundException
	switch {
	case err == nil:
		return enableStream(ctx, c, name, t, out.Table)
	case !errors.As(err, &notFound):
		return err
	}
	_, err = c.CreateTable(ctx, createTableInput(name, t))
	var inUse *types.ResourceInUseException
	if errors.As(err, &inUse) { // created meanwhile by someone else
		return nil
	}
	return err
}

// enableStream turns on the stream an existing table lacks.
func enableStream(ctx context.Context, c TableAdmin, name string, t tables.Table, d *types.TableDescription) error {
	u, ok := c.(streamUpdater)
	if t.Stream == "" || !ok || d == nil || (d.StreamSpecification != nil && aws.ToBool(d.StreamSpecification.StreamEnabled)) {
		return nil
	}
	_, err := u.UpdateTable(ctx, &dynamodb.UpdateTableInput{
		TableName:           aws.String(name),
		StreamSpecification: &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewType(t.Stream)},
	})
	return err
}

// waitActive polls until the table and its indexes are ACTIVE.
func waitActive(ctx context.Context, c TableAdmin, name string) error {
	delay := 50 * time.Millisecond
	for {
		out, err := c.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)})
		if err != nil {
			return err
		}
		if active(out.Table) {
			return nil
		}
		if err := sleep(ctx, delay); err != nil {
			return err
		}
		delay = min(2*delay, 2*time.Second)
	}
}

func active(t *types.TableDescription) bool {
	if t == nil || t.TableStatus != types.TableStatusActive {
		return false
	}
	for _, g := range t.GlobalSecondaryIndexes {
		if g.IndexStatus != types.IndexStatusActive {
			return false
		}
	}
	return true
}

func enableTTL(ctx context.Context, c TableAdmin, name, attr string) error {
	if d, ok := c.(ttlDescriber); ok {
		out, err := d.DescribeTimeToLive(ctx, &dynamodb.DescribeTimeToLiveInput{TableName: aws.String(name)})
		if err != nil {
			return err
		}
		if desc := out.TimeToLiveDescription; desc != nil && aws.ToString(desc.AttributeName) == attr &&
			(desc.TimeToLiveStatus == types.TimeToLiveStatusEnabled || desc.TimeToLiveStatus == types.TimeToLiveStatusEnabling) {
			return nil
		}
	}
	_, err := c.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{
		TableName:               aws.String(name),
		TimeToLiveSpecification: &types.TimeToLiveSpecification{AttributeName: aws.String(attr), Enabled: aws.Bool(true)},
	})
	var api smithy.APIError
	if errors.As(err, &api) && api.ErrorCode() == "ValidationException" && strings.Contains(strings.ToLower(api.ErrorMessage()), "already enabled") {
		return nil
	}
	return err
}
