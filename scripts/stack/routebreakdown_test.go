//go:build stack

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/voiceops/opsapi/shared/store/dynamo"
)

// observe makes the stack report to tr until the test ends.
func (tr *tracer) observe(t *testing.T) {
	st.Proxy.ObserveCalls(tr.call)
	st.ObserveInvoked(tr.invoked)
	t.Cleanup(func() { st.Proxy.ObserveCalls(nil); st.ObserveInvoked(nil) })
}

// accessDuration reads the handler's duration_ms from the access line of
// request id in the function's log, waiting up to 2 s for the line (the
// log is written as the function prints it). Zero when there is none.
func accessDuration(function, id string) time.Duration {
	if id == "" {
		return 0
	}
	needle := []byte(`"request_id":"` + id + `"`)
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		f, err := os.Open(filepath.Join(st.LogDir, function+".log"))
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := sc.Bytes()
			if !bytes.Contains(line, needle) || !bytes.Contains(line, []byte(`"msg":"request"`)) {
				continue
			}
			var l struct {
				DurationMS float64 `json:"duration_ms"`
			}
			if json.Unmarshal(line, &l) == nil {
				f.Close()
				return time.Duration(l.DurationMS * float64(time.Millisecond))
			}
		}
		f.Close()
	}
	return 0
}

// projectConversations counts the conversations of a project, and the
// items of the conversations table (every project's conversations, turns
// and index entries), read from the table (untimed): moto's Query walks
// every item of a table.
func projectConversations(t *testing.T, accountID, projectID string) (conversations, tableItems int) {
	db := dynamodb.NewFromConfig(st.AWS)
	table := st.Topology.TableNames().Conversations
	all, err := dynamo.NewStores(db, st.Topology.TableNames()).Conversations.ListConversationIntervals(context.Background(),
		accountID, projectID, time.UnixMilli(0), time.Now().Add(time.Minute), "", 1_000_000)
	if err != nil {
		t.Fatal(err)
	}
	in := &dynamodb.ScanInput{TableName: &table, Select: "COUNT"}
	for {
		out, err := db.Scan(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		tableItems += int(out.Count)
		if len(out.LastEvaluatedKey) == 0 {
			return len(all), tableItems
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
}

// quietBackground pauses the schedules until the test ends and waits (up
// to 30 s, within the suite's timeout) for the mapped queues to empty:
// with -schedule-every 2s the evaluator's scheduled run sends its 16
// shard messages every 2 s (once a minute deployed), and a backlog of
// thousands makes each of moto's ReceiveMessage take seconds of its one
// interpreter, every other call waiting behind it. It logs the queues'
// depths.
func quietBackground(t *testing.T) {
	st.PauseSchedules(true)
	t.Cleanup(func() { st.PauseSchedules(false) })
	q := sqs.NewFromConfig(st.AWS)
	depths := func() (map[string]string, int) {
		out, total := map[string]string{}, 0
		for _, m := range st.Topology.SQS {
			a, err := q.GetQueueAttributes(context.Background(), &sqs.GetQueueAttributesInput{QueueUrl: &m.QueueURL,
				AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameApproximateNumberOfMessages}})
			if err != nil {
				t.Fatal(err)
			}
			n, _ := strconv.Atoi(a.Attributes[string(sqstypes.QueueAttributeNameApproximateNumberOfMessages)])
			out[m.Function] = strconv.Itoa(n)
			total += n
		}
		return out, total
	}
	before, total := depths()
	start := time.Now()
	for total > 0 && time.Since(start) < 30*time.Second {
		time.Sleep(time.Second)
		_, total = depths()
	}
	after, _ := depths()
	t.Logf("schedules paused; messages waiting by consumer: %v, after %v: %v", before, time.Since(start).Round(time.Second), after)
}
