// Package tablestream reads a DynamoDB table's stream through the DynamoDB
// Streams API, in process: what the Lambda event source mapping does for
// the deployed evaluator, done by the dev server against moto or
// LocalStack (AWS_ENDPOINT_URL), the way shared/platform/queue consumes SQS there.
// It follows every shard, the ones that open later included, and hands
// the records of each GetRecords call to a handler; a batch whose handler
// fails is handed again (at least once, in order per shard).
package tablestream

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
)

// API is the part of the DynamoDB Streams client the reader uses.
type API interface {
	ListStreams(ctx context.Context, params *dynamodbstreams.ListStreamsInput, optFns ...func(*dynamodbstreams.Options)) (*dynamodbstreams.ListStreamsOutput, error)
	DescribeStream(ctx context.Context, params *dynamodbstreams.DescribeStreamInput, optFns ...func(*dynamodbstreams.Options)) (*dynamodbstreams.DescribeStreamOutput, error)
	GetShardIterator(ctx context.Context, params *dynamodbstreams.GetShardIteratorInput, optFns ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetShardIteratorOutput, error)
	GetRecords(ctx context.Context, params *dynamodbstreams.GetRecordsInput, optFns ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetRecordsOutput, error)
}

var _ API = (*dynamodbstreams.Client)(nil)

// Options tune a Reader.
type Options struct {
	// Poll is the pause after a pass over the shards that found nothing
	// (default 200 ms: about Lambda's four polls a second per shard,
	// which the evaluator's coalescing matches).
	Poll time.Duration
	// Rediscover is how often the shards are listed again (default 10 s).
	Rediscover time.Duration
	// OnError reports errors the reader retries.
	OnError func(error)
}

// Reader reads one table's stream.
type Reader struct {
	api   API
	table string
	opt   Options
}

// New returns a reader of table's stream.
func New(api API, table string, opt Options) *Reader {
	if opt.Poll <= 0 {
		opt.Poll = 200 * time.Millisecond
	}
	if opt.Rediscover <= 0 {
		opt.Rediscover = 10 * time.Second
	}
	if opt.OnError == nil {
		opt.OnError = func(error) {}
	}
	return &Reader{api: api, table: table, opt: opt}
}

// StreamARN returns the ARN of the table's latest stream.
func (r *Reader) StreamARN(ctx context.Context) (string, error) {
	out, err := r.api.ListStreams(ctx, &dynamodbstreams.ListStreamsInput{TableName: aws.String(r.table)})
	if err != nil {
		return "", fmt.Errorf("tablestream: listing the streams of %s: %w", r.table, err)
	}
	if len(out.Streams) == 0 {
		return "", fmt.Errorf("tablestream: table %s has no stream", r.table)
	}
	return aws.ToString(out.Streams[len(out.Streams)-1].StreamArn), nil
}

// shard is the reading position in one shard; iterator "" once it closed.
type shard struct {
	iterator string
	closed   bool
}

// Start finds the stream and its shards, positioned after the records
// present now (LATEST: only data stored from now on is handed), and
// returns a function that reads until ctx ends. Splitting the two lets a
// caller be sure that nothing stored after Start returns is missed.
func (r *Reader) Start(ctx context.Context, handle func(ctx context.Context, records []types.Record) error) (run func(), err error) {
	arn, err := r.StreamARN(ctx)
	if err != nil {
		return nil, err
	}
	shards := map[string]*shard{}
	if err := r.discover(ctx, arn, shards, types.ShardIteratorTypeLatest); err != nil {
		return nil, err
	}
	return func() { r.loop(ctx, arn, shards, handle) }, nil
}

func (r *Reader) loop(ctx context.Context, arn string, shards map[string]*shard, handle func(ctx context.Context, records []types.Record) error) {
	lastDiscover := time.Now()
	for ctx.Err() == nil {
		if time.Since(lastDiscover) >= r.opt.Rediscover {
			// Shards opened since (a split, a roll-over) are read from
			// their first record.
			if err := r.discover(ctx, arn, shards, types.ShardIteratorTypeTrimHorizon); err != nil {
				r.opt.OnError(err)
			}
			lastDiscover = time.Now()
		}
		busy := false
		for id, s := range shards {
			if s.closed || ctx.Err() != nil {
				continue
			}
			n, err := r.read(ctx, s, handle)
			if err != nil {
				r.opt.OnError(fmt.Errorf("tablestream: shard %s: %w", id, err))
				continue
			}
			busy = busy || n > 0
		}
		if !busy {
			select {
			case <-ctx.Done():
			case <-time.After(r.opt.Poll):
			}
		}
	}
}

// read makes one GetRecords call on the shard and hands its records over;
// the position moves on only when the handler succeeded.
func (r *Reader) read(ctx context.Context, s *shard, handle func(ctx context.Context, records []types.Record) error) (int, error) {
	out, err := r.api.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: aws.String(s.iterator), Limit: aws.Int32(1000)})
	if err != nil {
		return 0, err
	}
	if len(out.Records) > 0 {
		if err := handle(ctx, out.Records); err != nil {
			return 0, fmt.Errorf("handling %d records: %w", len(out.Records), err)
		}
	}
	if out.NextShardIterator == nil {
		s.closed = true
	} else {
		s.iterator = aws.ToString(out.NextShardIterator)
	}
	return len(out.Records), nil
}

// discover adds the shards it does not know yet, positioned at from.
func (r *Reader) discover(ctx context.Context, arn string, shards map[string]*shard, from types.ShardIteratorType) error {
	in := &dynamodbstreams.DescribeStreamInput{StreamArn: aws.String(arn)}
	for {
		out, err := r.api.DescribeStream(ctx, in)
		if err != nil {
			return fmt.Errorf("tablestream: describing %s: %w", arn, err)
		}
		if out.StreamDescription == nil {
			return nil
		}
		for _, sh := range out.StreamDescription.Shards {
			id := aws.ToString(sh.ShardId)
			if _, ok := shards[id]; ok {
				continue
			}
			it, err := r.api.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{
				StreamArn: aws.String(arn), ShardId: aws.String(id), ShardIteratorType: from,
			})
			if err != nil {
				return fmt.Errorf("tablestream: iterator of shard %s: %w", id, err)
			}
			shards[id] = &shard{iterator: aws.ToString(it.ShardIterator), closed: it.ShardIterator == nil}
		}
		if out.StreamDescription.LastEvaluatedShardId == nil {
			return nil
		}
		in.ExclusiveStartShardId = out.StreamDescription.LastEvaluatedShardId
	}
}
