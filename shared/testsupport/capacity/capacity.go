// Package capacity is a recording DynamoDB client for the capacity tests:
// it passes every call to a real client (moto) and counts the calls, the
// items read and written, and the request units DynamoDB would bill,
// computed from the items' sizes (moto answers no real consumed capacity:
// a 3 KB Put reports 1 unit and an 18 KB Query 1 unit). A write is billed
// on the larger of the item before and after it, so the client reads both
// (uncounted) around every write. Index writes are not counted: the
// tables measured here have no index on the items they write, or say so.
package capacity

import (
	"context"
	"math"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/voiceops/opsapi/shared/store/dynamo"
)

// Tally is what a run of calls cost.
type Tally struct {
	Calls      int
	ItemsRead  int
	ItemsWrote int
	RRU, WRU   float64
}

// Client records what its calls cost. Its fields are the client it wraps
// and the key attributes of the tables it sees (every table here has pk and sk).
type Client struct {
	DB     *dynamodb.Client
	PK, SK string

	mu sync.Mutex
	t  Tally
}

// New wraps db; the tables' keys are pk and sk.
func New(db *dynamodb.Client, pk, sk string) *Client { return &Client{DB: db, PK: pk, SK: sk} }

var _ dynamo.DB = (*Client)(nil)

// Take returns the tally since the last Take and starts a new one.
func (c *Client) Take() Tally {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.t
	c.t = Tally{}
	return t
}

func (c *Client) add(f func(t *Tally)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t.Calls++
	f(&c.t)
}

// readUnits: 4 KB units, at least one, halved when eventually consistent.
func readUnits(bytes int, consistent *bool) float64 {
	u := max(1, math.Ceil(float64(bytes)/4096))
	if consistent == nil || !*consistent {
		u /= 2
	}
	return u
}

// writeUnits: 1 KB units, at least one.
func writeUnits(bytes int) float64 { return max(1, math.Ceil(float64(bytes)/1024)) }

// current returns the stored item's size under key (0 when absent), uncounted.
func (c *Client) current(ctx context.Context, table *string, key map[string]types.AttributeValue) int {
	out, err := c.DB.GetItem(ctx, &dynamodb.GetItemInput{TableName: table, Key: key, ConsistentRead: aws.Bool(true)})
	if err != nil || out.Item == nil {
		return 0
	}
	return dynamo.ItemSize(out.Item)
}

func (c *Client) keyOf(it map[string]types.AttributeValue) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{c.PK: it[c.PK], c.SK: it[c.SK]}
}

func (c *Client) GetItem(ctx context.Context, in *dynamodb.GetItemInput, o ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	out, err := c.DB.GetItem(ctx, in, o...)
	if err == nil {
		c.add(func(t *Tally) {
			t.RRU += readUnits(dynamo.ItemSize(out.Item), in.ConsistentRead)
			if out.Item != nil {
				t.ItemsRead++
			}
		})
	}
	return out, err
}

// BatchGetItem is charged like a GetItem per item read.
func (c *Client) BatchGetItem(ctx context.Context, in *dynamodb.BatchGetItemInput, o ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error) {
	out, err := c.DB.BatchGetItem(ctx, in, o...)
	if err == nil {
		c.add(func(t *Tally) {
			for table, items := range out.Responses {
				for _, it := range items {
					t.RRU += readUnits(dynamo.ItemSize(it), in.RequestItems[table].ConsistentRead)
					t.ItemsRead++
				}
			}
		})
	}
	return out, err
}

func (c *Client) Query(ctx context.Context, in *dynamodb.QueryInput, o ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	out, err := c.DB.Query(ctx, in, o...)
	if err == nil {
		n := 0
		for _, it := range out.Items {
			n += dynamo.ItemSize(it)
		}
		c.add(func(t *Tally) {
			t.RRU += readUnits(n, in.ConsistentRead)
			t.ItemsRead += int(max(out.ScannedCount, int32(len(out.Items))))
		})
	}
	return out, err
}

func (c *Client) PutItem(ctx context.Context, in *dynamodb.PutItemInput, o ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	before := c.current(ctx, in.TableName, c.keyOf(in.Item))
	out, err := c.DB.PutItem(ctx, in, o...)
	c.add(func(t *Tally) {
		t.WRU += writeUnits(max(before, dynamo.ItemSize(in.Item)))
		if err == nil {
			t.ItemsWrote++
		}
	})
	return out, err
}

func (c *Client) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, o ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	before := c.current(ctx, in.TableName, in.Key)
	out, err := c.DB.UpdateItem(ctx, in, o...)
	after := c.current(ctx, in.TableName, in.Key)
	c.add(func(t *Tally) {
		t.WRU += writeUnits(max(before, after))
		if err == nil {
			t.ItemsWrote++
		}
	})
	return out, err
}

func (c *Client) DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, o ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	before := c.current(ctx, in.TableName, in.Key)
	out, err := c.DB.DeleteItem(ctx, in, o...)
	c.add(func(t *Tally) {
		t.WRU += writeUnits(before)
		if err == nil {
			t.ItemsWrote++
		}
	})
	return out, err
}

// TransactWriteItems: every item costs twice a plain write of it; a
// condition check costs like a write of the item it checks.
func (c *Client) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, o ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	type sized struct {
		table *string
		key   map[string]types.AttributeValue
		put   int
	}
	var items []sized
	for _, ti := range in.TransactItems {
		switch {
		case ti.Put != nil:
			items = append(items, sized{ti.Put.TableName, c.keyOf(ti.Put.Item), dynamo.ItemSize(ti.Put.Item)})
		case ti.Update != nil:
			items = append(items, sized{ti.Update.TableName, ti.Update.Key, 0})
		case ti.Delete != nil:
			items = append(items, sized{ti.Delete.TableName, ti.Delete.Key, 0})
		case ti.ConditionCheck != nil:
			items = append(items, sized{ti.ConditionCheck.TableName, ti.ConditionCheck.Key, 0})
		}
	}
	before := make([]int, len(items))
	for i, it := range items {
		before[i] = c.current(ctx, it.table, it.key)
	}
	out, err := c.DB.TransactWriteItems(ctx, in, o...)
	units := 0.0
	for i, it := range items {
		after := c.current(ctx, it.table, it.key)
		units += 2 * writeUnits(max(before[i], after, it.put))
	}
	c.add(func(t *Tally) {
		t.WRU += units
		if err == nil {
			t.ItemsWrote += len(items)
		}
	})
	return out, err
}
