package dynamo

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/voiceops/opsapi/shared/voiceops"
)

// sizedDB refuses, before sending, a write of an item over DynamoDB's
// item limit (voiceops.MaxItemBytes) with voiceops.ItemTooLarge (413)
// instead of the ValidationException DynamoDB would answer (a 500). The
// field limits keep valid requests far from it; this is the last line, and
// the memory stores draw the same one.
type sizedDB struct{ DB }

func (d sizedDB) PutItem(ctx context.Context, in *dynamodb.PutItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	if n := itemSize(in.Item); n > voiceops.MaxItemBytes {
		return nil, voiceops.ItemTooLarge("record", n)
	}
	return d.DB.PutItem(ctx, in, optFns...)
}

func (d sizedDB) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, optFns ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	for _, ti := range in.TransactItems {
		if ti.Put == nil {
			continue
		}
		if n := itemSize(ti.Put.Item); n > voiceops.MaxItemBytes {
			return nil, voiceops.ItemTooLarge("record", n)
		}
	}
	return d.DB.TransactWriteItems(ctx, in, optFns...)
}

// itemSize is the size of an item as DynamoDB bills it: attribute names
// plus values (strings and binaries their bytes, numbers about one byte
// per two significant digits plus one, booleans and nulls one byte, lists
// and maps 3 bytes plus one per element plus their elements).
func itemSize(it item) int {
	n := 0
	for name, v := range it {
		n += len(name) + valueSize(v)
	}
	return n
}

func valueSize(v types.AttributeValue) int {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return len(v.Value)
	case *types.AttributeValueMemberN:
		digits := 0
		for _, c := range v.Value {
			if c >= '0' && c <= '9' {
				digits++
			}
		}
		return (digits+1)/2 + 1
	case *types.AttributeValueMemberB:
		return len(v.Value)
	case *types.AttributeValueMemberBOOL, *types.AttributeValueMemberNULL:
		return 1
	case *types.AttributeValueMemberL:
		n := 3
		for _, e := range v.Value {
			n += 1 + valueSize(e)
		}
		return n
	case *types.AttributeValueMemberM:
		n := 3
		for k, e := range v.Value {
			n += 1 + len(k) + valueSize(e)
		}
		return n
	case *types.AttributeValueMemberSS:
		n := 0
		for _, s := range v.Value {
			n += len(s)
		}
		return n
	}
	panic(fmt.Sprintf("unsized attribute value %T", v))
}

// ItemSize is the size of an item as DynamoDB bills it (itemSize): the
// capacity tests compute request units from it.
func ItemSize(it map[string]types.AttributeValue) int { return itemSize(it) }
