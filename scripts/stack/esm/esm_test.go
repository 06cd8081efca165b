package esm

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
)

func TestSettle(t *testing.T) {
	recs := []events.SQSMessage{{MessageId: "a"}, {MessageId: "b"}, {MessageId: "c"}}
	ids := func(rs []events.SQSMessage) string {
		s := ""
		for _, r := range rs {
			s += r.MessageId
		}
		return s
	}
	tests := []struct {
		name   string
		out    string
		fnErr  bool
		report bool
		want   string
	}{
		{"success deletes all", `null`, false, true, "abc"},
		{"empty failures delete all", `{"batchItemFailures":[]}`, false, true, "abc"},
		{"partial failure keeps the failed", `{"batchItemFailures":[{"itemIdentifier":"b"}]}`, false, true, "ac"},
		{"function error keeps all", `{"errorMessage":"x","errorType":"y"}`, true, true, ""},
		{"unknown identifier fails the batch", `{"batchItemFailures":[{"itemIdentifier":"zz"}]}`, false, true, ""},
		{"empty identifier fails the batch", `{"batchItemFailures":[{"itemIdentifier":""}]}`, false, true, ""},
		{"unreadable response fails the batch", `"oops"`, false, true, ""},
		{"without ReportBatchItemFailures the response is ignored", `{"batchItemFailures":[{"itemIdentifier":"b"}]}`, false, false, "abc"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ids(Settle(recs, []byte(tt.out), tt.fnErr, tt.report)); got != tt.want {
				t.Errorf("Settle deletes %q, want %q", got, tt.want)
			}
		})
	}
}

func TestMatchAny(t *testing.T) {
	p, err := ParsePattern(`{"eventName":["INSERT"]}`)
	if err != nil {
		t.Fatal(err)
	}
	nested, _ := ParsePattern(`{"dynamodb":{"Keys":{"pk":{"S":[{"prefix":"acct_1#"}]}}}}`)
	but, _ := ParsePattern(`{"eventName":[{"anything-but":["REMOVE"]}]}`)
	exists, _ := ParsePattern(`{"dynamodb":{"NewImage":[{"exists":false}]}}`)
	rec := func(name, pk string) []byte {
		return []byte(fmt.Sprintf(`{"eventName":%q,"dynamodb":{"Keys":{"pk":{"S":%q}}}}`, name, pk))
	}
	tests := []struct {
		name     string
		patterns []Pattern
		rec      []byte
		want     bool
	}{
		{"no filter passes all", nil, rec("REMOVE", "x"), true},
		{"equal", []Pattern{p}, rec("INSERT", "x"), true},
		{"not equal", []Pattern{p}, rec("REMOVE", "x"), false},
		{"nested prefix", []Pattern{nested}, rec("MODIFY", "acct_1#proj"), true},
		{"nested prefix misses", []Pattern{nested}, rec("MODIFY", "acct_2#proj"), false},
		{"any of several patterns", []Pattern{p, nested}, rec("MODIFY", "acct_1#p"), true},
		{"anything-but", []Pattern{but}, rec("MODIFY", "x"), true},
		{"anything-but refuses", []Pattern{but}, rec("REMOVE", "x"), false},
		{"exists false", []Pattern{exists}, rec("INSERT", "x"), true},
		{"not JSON", []Pattern{p}, []byte("nope"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := MatchAny(tt.patterns, tt.rec); got != tt.want {
				t.Errorf("MatchAny = %v, want %v", got, tt.want)
			}
		})
	}
	if _, err := ParsePattern("{"); err == nil {
		t.Error("a broken pattern parsed")
	}
}

func records(n int) []Record {
	out := make([]Record, n)
	for i := range out {
		seq := fmt.Sprintf("%03d", i)
		out[i] = Record{Sequence: seq, Created: time.Unix(1000, 0), Raw: map[string]any{"eventName": "INSERT", "dynamodb": map[string]any{"SequenceNumber": seq}}}
	}
	return out
}

// fakeFunction records the batches it gets and fails per its rule.
type fakeFunction struct {
	batches [][]string
	fail    func(seqs []string) (out string, fnErr bool)
}

func (f *fakeFunction) invoke(_ context.Context, _ string, payload []byte) ([]byte, bool, error) {
	var ev struct {
		Records []struct {
			Dynamodb struct{ SequenceNumber string }
		}
	}
	if err := json.Unmarshal(payload, &ev); err != nil {
		return nil, false, err
	}
	var seqs []string
	for _, r := range ev.Records {
		seqs = append(seqs, r.Dynamodb.SequenceNumber)
	}
	f.batches = append(f.batches, seqs)
	out, fnErr := f.fail(seqs)
	return []byte(out), fnErr, nil
}

func TestProcess(t *testing.T) {
	now := func() time.Time { return time.Unix(1010, 0) }
	m := StreamMapping{Function: "evaluator", MaxRetries: 5, Bisect: true, ReportFailures: true, MaxRecordAge: time.Hour}
	t.Run("success", func(t *testing.T) {
		f := &fakeFunction{fail: func([]string) (string, bool) { return `{"batchItemFailures":[]}`, false }}
		if got := m.Process(context.Background(), records(4), f.invoke, now); len(got) != 0 || len(f.batches) != 1 {
			t.Fatalf("failures %v, batches %v", got, f.batches)
		}
	})
	t.Run("partial failure retries from the failed record", func(t *testing.T) {
		calls := 0
		f := &fakeFunction{fail: func(seqs []string) (string, bool) {
			calls++
			if calls == 1 {
				return `{"batchItemFailures":[{"itemIdentifier":"002"}]}`, false
			}
			return `{}`, false
		}}
		m.Process(context.Background(), records(4), f.invoke, now)
		if len(f.batches) != 2 || fmt.Sprint(f.batches[1]) != "[002 003]" {
			t.Fatalf("batches %v, want the retry to start at 002", f.batches)
		}
	})
	t.Run("a poison record is bisected out and given up after the retries", func(t *testing.T) {
		f := &fakeFunction{fail: func(seqs []string) (string, bool) {
			for _, s := range seqs {
				if s == "001" {
					return `{"errorMessage":"boom","errorType":"x"}`, true
				}
			}
			return `{}`, false
		}}
		got := m.Process(context.Background(), records(4), f.invoke, now)
		if len(got) != 1 || len(got[0].Records) != 1 || got[0].Records[0].Sequence != "001" || got[0].Condition != "RetryAttemptsExhausted" {
			t.Fatalf("failures %+v, want only 001 given up", got)
		}
	})
	t.Run("filtered records are not sent", func(t *testing.T) {
		p, _ := ParsePattern(`{"eventName":["INSERT"]}`)
		mf := m
		mf.Filters = []Pattern{p}
		rs := records(3)
		rs[1].Raw["eventName"] = "REMOVE"
		f := &fakeFunction{fail: func([]string) (string, bool) { return `{}`, false }}
		mf.Process(context.Background(), rs, f.invoke, now)
		if len(f.batches) != 1 || fmt.Sprint(f.batches[0]) != "[000 002]" {
			t.Fatalf("batches %v", f.batches)
		}
	})
	t.Run("records older than the maximum age are given up", func(t *testing.T) {
		rs := records(2)
		rs[0].Created = now().Add(-2 * time.Hour)
		f := &fakeFunction{fail: func([]string) (string, bool) { return `{}`, false }}
		got := m.Process(context.Background(), rs, f.invoke, now)
		if len(got) != 1 || got[0].Condition != "RecordAgeExceeded" || fmt.Sprint(f.batches) != "[[001]]" {
			t.Fatalf("failures %+v, batches %v", got, f.batches)
		}
	})
	t.Run("each invocation reports its last record's age", func(t *testing.T) {
		rs := records(3)
		rs[2].Created = now().Add(-4 * time.Second)
		var ages []time.Duration
		mi := m
		mi.IteratorAge = func(d time.Duration) { ages = append(ages, d) }
		f := &fakeFunction{fail: func([]string) (string, bool) { return `{}`, false }}
		mi.Process(context.Background(), rs, f.invoke, now)
		if fmt.Sprint(ages) != "[4s]" {
			t.Fatalf("iterator ages %v, want [4s]", ages)
		}
	})
}

func TestParseRate(t *testing.T) {
	for expr, want := range map[string]time.Duration{"rate(1 minute)": time.Minute, "rate(5 minutes)": 5 * time.Minute, "rate(2 hours)": 2 * time.Hour} {
		if got, err := ParseRate(expr); err != nil || got != want {
			t.Errorf("ParseRate(%q) = %v, %v", expr, got, err)
		}
	}
	for _, bad := range []string{"cron(0 * * * ? *)", "rate(0 minutes)", "rate(1 fortnight)", "rate(1)"} {
		if _, err := ParseRate(bad); err == nil {
			t.Errorf("ParseRate(%q) succeeded", bad)
		}
	}
	ev := ScheduledEvent(Schedule{RuleARN: "arn:r", Account: "1", Region: "us-east-1"}, time.Unix(0, 0))
	var got map[string]any
	if err := json.Unmarshal(ev, &got); err != nil || got["detail-type"] != "Scheduled Event" || got["source"] != "aws.events" {
		t.Errorf("scheduled event %s", ev)
	}
}
