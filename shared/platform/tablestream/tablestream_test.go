package tablestream_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	dbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"

	"github.com/voiceops/opsapi/shared/platform/tables"
	"github.com/voiceops/opsapi/shared/platform/tablestream"
	"github.com/voiceops/opsapi/shared/testsupport/awstest"
)

func put(t *testing.T, db *dynamodb.Client, table, pk, sk string) {
	t.Helper()
	_, err := db.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(table), Item: map[string]dbtypes.AttributeValue{
		tables.PK: &dbtypes.AttributeValueMemberS{Value: pk}, tables.SK: &dbtypes.AttributeValueMemberS{Value: sk},
	}})
	if err != nil {
		t.Fatal(err)
	}
}

// TestReaderHandsOverNewRecordsAtLeastOnce runs against moto's DynamoDB
// Streams: records stored before Start are not handed over, the ones after
// are, in order, and a batch whose handler failed is handed over again.
func TestReaderHandsOverNewRecordsAtLeastOnce(t *testing.T) {
	db := awstest.DynamoDB(t)
	table := awstest.Tables(t, db).Metrics
	put(t, db, table, "M#acct_old", "0000000000#a")

	var mu sync.Mutex
	var got []string
	calls, failed := 0, false
	r := tablestream.New(awstest.DynamoDBStreams(t), table, tablestream.Options{Poll: 20 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	run, err := r.Start(ctx, func(_ context.Context, records []types.Record) error {
		mu.Lock()
		defer mu.Unlock()
		calls++
		if !failed {
			failed = true
			return errors.New("the first batch fails")
		}
		for _, rec := range records {
			pk := rec.Dynamodb.Keys[tables.PK].(*types.AttributeValueMemberS).Value
			got = append(got, string(rec.EventName)+" "+pk)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { defer close(done); run() }()
	put(t, db, table, "M#acct_a", "0000000001#a")
	put(t, db, table, "M#acct_a#p1", "0000000001#b")

	deadline := time.Now().Add(20 * time.Second)
	for {
		mu.Lock()
		n := len(got)
		mu.Unlock()
		if n >= 2 || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	<-done
	mu.Lock()
	defer mu.Unlock()
	want := []string{"INSERT M#acct_a", "INSERT M#acct_a#p1"}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("records %v, want %v (the old item excluded, the failed batch retried)", got, want)
	}
	if calls < 2 {
		t.Errorf("handler called %d times: the failed batch was not handed over again", calls)
	}
}
