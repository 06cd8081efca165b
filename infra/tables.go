package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/jsii-runtime-go"

	"github.com/voiceops/opsapi/shared/platform/tables"
)

// newTables creates one DynamoDB table per entry of tables.All, the single
// definition the dev server also uses, and returns them by ID.
func newTables(stack awscdk.Stack, cfg StackConfig) map[string]awsdynamodb.Table {
	out := map[string]awsdynamodb.Table{}
	for _, t := range tables.All {
		id := constructID(t.ID) + "Table"
		tbl := awsdynamodb.NewTable(stack, jsii.String(id), &awsdynamodb.TableProps{
			TableName:    jsii.String(tables.PhysicalName(cfg.prefix(), t)),
			PartitionKey: stringKey(t.PartitionKey),
			SortKey:      stringKey(t.SortKey),
			// TTL deletion is late; every read filters expired items anyway.
			TimeToLiveAttribute: optional(t.TTLAttribute),
			BillingMode:         awsdynamodb.BillingMode_PAY_PER_REQUEST,
			PointInTimeRecoverySpecification: &awsdynamodb.PointInTimeRecoverySpecification{
				PointInTimeRecoveryEnabled: jsii.Bool(true),
			},
			Encryption:         awsdynamodb.TableEncryption_AWS_MANAGED,
			DeletionProtection: jsii.Bool(cfg.DeletionProtection),
			RemovalPolicy:      cfg.removalPolicy(),
			Stream:             awsdynamodb.StreamViewType(t.Stream), // "" is none
		})
		for _, g := range t.GSIs {
			projection := awsdynamodb.ProjectionType_ALL
			if g.KeysOnly {
				projection = awsdynamodb.ProjectionType_KEYS_ONLY
			}
			tbl.AddGlobalSecondaryIndex(&awsdynamodb.GlobalSecondaryIndexProps{
				IndexName:      jsii.String(g.Name),
				PartitionKey:   stringKey(g.PartitionKey),
				SortKey:        stringKey(g.SortKey),
				ProjectionType: projection,
			})
		}
		awscdk.NewCfnOutput(stack, jsii.String(id+"Name"), &awscdk.CfnOutputProps{
			Description: jsii.String("DynamoDB table " + t.ID + " (" + t.EnvVar + ")"),
			Value:       tbl.TableName(),
		})
		out[t.ID] = tbl
	}
	return out
}

// stringKey is a string key attribute, or nil for no key.
func stringKey(name string) *awsdynamodb.Attribute {
	if name == "" {
		return nil
	}
	return &awsdynamodb.Attribute{Name: jsii.String(name), Type: awsdynamodb.AttributeType_STRING}
}

// optional is nil for "", else a jsii string.
func optional(s string) *string {
	if s == "" {
		return nil
	}
	return jsii.String(s)
}
