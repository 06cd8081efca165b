package dynamo

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// Narrow is c behind DB and nothing more. A *dynamodb.Client reachable
// from an interface keeps every exported method it has (about sixty
// operations, with their serializers) in a binary that links reflect's
// MethodByName, as every binary linking protobuf does (functions/outbound,
// through libphonenumber): the linker cannot tell which of them a call
// through reflection would reach. It follows struct fields too, so the
// wrapper holds the seven calls the stores make as method values, not the
// client: only they are linked.
func Narrow(c *dynamodb.Client) DB {
	return &narrowDB{
		getItem: c.GetItem, batchGetItem: c.BatchGetItem, putItem: c.PutItem, updateItem: c.UpdateItem,
		deleteItem: c.DeleteItem, query: c.Query, transactWriteItems: c.TransactWriteItems,
	}
}

type call[In, Out any] func(context.Context, *In, ...func(*dynamodb.Options)) (*Out, error)

type narrowDB struct {
	getItem            call[dynamodb.GetItemInput, dynamodb.GetItemOutput]
	batchGetItem       call[dynamodb.BatchGetItemInput, dynamodb.BatchGetItemOutput]
	putItem            call[dynamodb.PutItemInput, dynamodb.PutItemOutput]
	updateItem         call[dynamodb.UpdateItemInput, dynamodb.UpdateItemOutput]
	deleteItem         call[dynamodb.DeleteItemInput, dynamodb.DeleteItemOutput]
	query              call[dynamodb.QueryInput, dynamodb.QueryOutput]
	transactWriteItems call[dynamodb.TransactWriteItemsInput, dynamodb.TransactWriteItemsOutput]
}

func (n *narrowDB) GetItem(ctx context.Context, in *dynamodb.GetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	return n.getItem(ctx, in, opts...)
}

func (n *narrowDB) BatchGetItem(ctx context.Context, in *dynamodb.BatchGetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error) {
	return n.batchGetItem(ctx, in, opts...)
}

func (n *narrowDB) PutItem(ctx context.Context, in *dynamodb.PutItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	return n.putItem(ctx, in, opts...)
}

func (n *narrowDB) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	return n.updateItem(ctx, in, opts...)
}

func (n *narrowDB) DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	return n.deleteItem(ctx, in, opts...)
}

func (n *narrowDB) Query(ctx context.Context, in *dynamodb.QueryInput, opts ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	return n.query(ctx, in, opts...)
}

func (n *narrowDB) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, opts ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	return n.transactWriteItems(ctx, in, opts...)
}
