package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/voiceops/opsapi/scripts/stack/alarms"
	"github.com/voiceops/opsapi/scripts/stack/cfn"
	"github.com/voiceops/opsapi/scripts/stack/esm"
	"github.com/voiceops/opsapi/scripts/stack/sns"
)

// The service metrics the runner computes itself, by namespace: what
// Lambda, SQS, API Gateway and DynamoDB publish for the stack's resources.
// A metric of another service, or one of these not listed, is produced by
// nothing here (TestEveryAlarmMetricIsProduced).
var serviceMetrics = map[string][]string{
	"AWS/Lambda":     {"Invocations", "Errors", "Throttles", "Duration", "IteratorAge"},
	"AWS/SQS":        {"ApproximateNumberOfMessagesVisible", "ApproximateNumberOfMessagesNotVisible", "ApproximateAgeOfOldestMessage"},
	"AWS/ApiGateway": {"Count", "4xx", "5xx", "Latency"},
	"AWS/DynamoDB":   {"ReadThrottleEvents", "WriteThrottleEvents", "ThrottledRequests"},
}

// IsServiceMetric tells whether the runner computes a service metric.
func IsServiceMetric(namespace, name string) bool {
	return slices.Contains(serviceMetrics[namespace], name)
}

// monitor collects the stack's metrics and evaluates the template's alarms
// on them, publishing each state change to the alarm's SNS actions.
type monitor struct {
	store   *alarms.Store
	eval    *alarms.Evaluator
	now     func() time.Time // the alarms' clock, scaled
	scale   float64
	sns     sns.Client
	account string
	region  string
	log     *slog.Logger

	mu       sync.Mutex
	notified []alarms.Change // every change, in order (tests)
}

// readAlarms reads the template's alarms, resolved against the stack's
// physical names (functions, queues, APIs, tables). An alarm the
// evaluator cannot run (a metric math function it lacks) is returned in
// unread, not evaluated: the rest of the stack still runs, and a scenario
// fails on it (TestEveryAlarmMetricIsProduced).
func readAlarms(t cfn.Template, v *cfn.Values) (out []*alarms.Alarm, unread []error, err error) {
	ids := t.OfType("AWS::CloudWatch::Alarm")
	sort.Strings(ids)
	for _, id := range ids {
		props, err := v.Resolve(map[string]any(t.Resources[id].Properties))
		if err != nil {
			return nil, nil, fmt.Errorf("alarm %s: %w", id, err)
		}
		a, err := alarms.Parse(id, props.(map[string]any))
		if err != nil {
			unread = append(unread, err)
			continue
		}
		out = append(out, a)
	}
	return out, unread, nil
}

// Unevaluable is an alarm the runner reads but does not evaluate in this
// run, and why.
type Unevaluable struct {
	Alarm  *alarms.Alarm
	Reason string
}

// splitUnevaluable sets aside the alarms that count missing data as
// breaching and have a period shorter than the slowest schedule's
// interval on the alarms' clock. Such an alarm expects a datapoint every
// period (in this template, from a scheduled run: the evaluator's
// ScheduledRunDuration); a schedule that fires less often than that on
// the scaled clock (-schedule-every 0 fires at the rules' real rates, so
// -alarm-time-scale 60 makes a one-minute rate an hour) would make it
// fire where the deployed stack would not.
func splitUnevaluable(as []*alarms.Alarm, schedules []esm.Schedule, every time.Duration, scale float64) (keep []*alarms.Alarm, out []Unevaluable) {
	var slowest time.Duration
	for _, s := range schedules {
		d := s.Every
		if every > 0 {
			d = every
		}
		slowest = max(slowest, time.Duration(float64(d)*scale))
	}
	for _, a := range as {
		if a.TreatMissingData == alarms.Breaching && slowest > a.Period {
			out = append(out, Unevaluable{Alarm: a, Reason: fmt.Sprintf(
				"missing data is breaching, and the schedules fire every %s on the alarms' clock, longer than its %s period "+
					"(-schedule-every %s, -alarm-time-scale %g)", slowest, a.Period, every, scale)})
			continue
		}
		keep = append(keep, a)
	}
	return keep, out
}

// actionTopics returns the SNS topics the alarms' actions name.
func actionTopics(as []*alarms.Alarm) []string {
	var out []string
	for _, a := range as {
		for _, s := range []alarms.State{alarms.Alarming, alarms.OK, alarms.InsufficientData} {
			for _, arn := range a.Actions(s) {
				if !slices.Contains(out, arn) {
					out = append(out, arn)
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

func newMonitor(as []*alarms.Alarm, scale float64, c sns.Client, account, region string, log *slog.Logger) *monitor {
	m := &monitor{store: alarms.NewStore(), now: alarms.Scaled(time.Now, scale), scale: scale, sns: c, account: account, region: region, log: log}
	m.eval = &alarms.Evaluator{Store: m.store, Alarms: as, Now: m.now}
	return m
}

func (m *monitor) put(namespace, name string, dims map[string]string, v float64) {
	m.store.Put(alarms.NewMetric(namespace, name, dims), m.now(), v)
}

// invocation records Lambda's metrics of one invocation.
func (m *monitor) invocation(functionName string, d time.Duration, failed bool) {
	dims := map[string]string{"FunctionName": functionName}
	m.put("AWS/Lambda", "Invocations", dims, 1)
	m.put("AWS/Lambda", "Errors", dims, b2f(failed))
	m.put("AWS/Lambda", "Duration", dims, float64(d)/float64(time.Millisecond))
}

func (m *monitor) throttled(functionName string) {
	m.put("AWS/Lambda", "Throttles", map[string]string{"FunctionName": functionName}, 1)
}

func (m *monitor) iteratorAge(functionName string, age time.Duration) {
	m.put("AWS/Lambda", "IteratorAge", map[string]string{"FunctionName": functionName}, float64(age/time.Millisecond))
}

// request records API Gateway's metrics of one request, by API and by
// API and stage (an HTTP API has the one $default stage).
func (m *monitor) request(apiID string, status int, latency time.Duration) {
	for _, dims := range []map[string]string{{"ApiId": apiID}, {"ApiId": apiID, "Stage": "$default"}} {
		m.put("AWS/ApiGateway", "Count", dims, 1)
		m.put("AWS/ApiGateway", "4xx", dims, b2f(status/100 == 4))
		m.put("AWS/ApiGateway", "5xx", dims, b2f(status/100 == 5))
		m.put("AWS/ApiGateway", "Latency", dims, float64(latency)/float64(time.Millisecond))
	}
}

func (m *monitor) tableThrottled(table string, write bool) {
	dims := map[string]string{"TableName": table}
	name := "ReadThrottleEvents"
	if write {
		name = "WriteThrottleEvents"
	}
	m.put("AWS/DynamoDB", name, dims, 1)
	m.put("AWS/DynamoDB", "ThrottledRequests", dims, 1)
}

// emf records the metrics of a function's log line in the Embedded Metric
// Format, at the time it is read.
func (m *monitor) emf(line []byte) {
	at := m.now()
	for _, d := range alarms.ParseEMF(line) {
		for _, v := range d.Values {
			m.store.Put(d.Metric, at, v)
		}
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// every is a duration of alarm time in real time.
func (m *monitor) every(d time.Duration) time.Duration {
	return max(50*time.Millisecond, time.Duration(float64(d)/m.scale))
}

// run evaluates the alarms until ctx ends: CloudWatch evaluates each
// minute; here six times an alarm-minute, so a change is seen soon after
// its period ends.
func (m *monitor) run(ctx context.Context) {
	m.eval.Run(ctx, m.every(10*time.Second), func(c alarms.Change) { m.publish(ctx, c) })
}

// publish sends a change's notification to the actions of its new state.
func (m *monitor) publish(ctx context.Context, c alarms.Change) {
	m.mu.Lock()
	m.notified = append(m.notified, c)
	m.mu.Unlock()
	level := slog.LevelInfo
	if c.Old == alarms.InsufficientData && c.New == alarms.OK {
		level = slog.LevelDebug // every alarm's first evaluation: noise
	}
	m.log.Log(ctx, level, "alarm state change", "alarm", c.Alarm.Name, "from", c.Old, "to", c.New, "reason", c.Reason)
	body := c.Notification(m.account, m.region).JSON()
	for _, arn := range c.Alarm.Actions(c.New) {
		cl := m.sns
		if r := sns.Region(arn); r != "" {
			cl.Region = r
		}
		if err := cl.Publish(ctx, arn, c.Subject(m.region), body); err != nil && ctx.Err() == nil {
			m.log.Error("alarm notification not published", "alarm", c.Alarm.Name, "topic", arn, "err", err)
		}
	}
}

// sampleQueues reads each queue's depth once an alarm-minute, as SQS
// publishes it. The age of the oldest message is the time since the queue
// was last seen with no message visible or in flight: exact while the
// oldest message stays, an overestimate for a queue that is never empty
// (SQS lets nothing read a message's age without receiving it).
func (m *monitor) sampleQueues(ctx context.Context, q *sqs.Client, queues map[string]string) {
	since := map[string]time.Time{} // queue name → first seen not empty
	t := time.NewTicker(m.every(time.Minute))
	defer t.Stop()
	for {
		for name, u := range queues {
			out, err := q.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: &u, AttributeNames: []sqstypes.QueueAttributeName{
				sqstypes.QueueAttributeNameApproximateNumberOfMessages, sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible}})
			if err != nil {
				if ctx.Err() == nil {
					m.log.Warn("sampling a queue", "queue", name, "err", err)
				}
				continue
			}
			visible, _ := strconv.Atoi(out.Attributes[string(sqstypes.QueueAttributeNameApproximateNumberOfMessages)])
			inFlight, _ := strconv.Atoi(out.Attributes[string(sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible)])
			now := m.now()
			dims := map[string]string{"QueueName": name}
			m.store.Put(alarms.NewMetric("AWS/SQS", "ApproximateNumberOfMessagesVisible", dims), now, float64(visible))
			m.store.Put(alarms.NewMetric("AWS/SQS", "ApproximateNumberOfMessagesNotVisible", dims), now, float64(inFlight))
			age := 0.0
			if visible+inFlight == 0 {
				delete(since, name)
			} else {
				if _, ok := since[name]; !ok {
					since[name] = now
				}
				age = now.Sub(since[name]).Seconds()
			}
			m.store.Put(alarms.NewMetric("AWS/SQS", "ApproximateAgeOfOldestMessage", dims), now, age)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// tailLogs reads the lines the functions print (their log files in dir,
// one per function) as they are written and hands each to line.
func tailLogs(ctx context.Context, dir string, names []string, line func([]byte)) {
	offsets := map[string]int64{}
	partial := map[string][]byte{}
	t := time.NewTicker(200 * time.Millisecond)
	defer t.Stop()
	for {
		for _, n := range names {
			path := filepath.Join(dir, n+".log")
			f, err := os.Open(path)
			if err != nil {
				continue
			}
			if _, err := f.Seek(offsets[n], io.SeekStart); err == nil {
				r := bufio.NewReaderSize(f, 64<<10)
				for {
					b, err := r.ReadBytes('\n')
					offsets[n] += int64(len(b))
					if err != nil { // io.EOF: the rest of a line still being written
						partial[n] = append(partial[n], b...)
						break
					}
					if p := partial[n]; len(p) > 0 {
						b = append(p, b...)
						partial[n] = nil
					}
					line(bytes.TrimSpace(b))
				}
			}
			f.Close()
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// statusWriter remembers a response's status.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// measured records API Gateway's metrics of each request h serves.
func (m *monitor) measured(apiID string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		h.ServeHTTP(sw, r)
		m.request(apiID, sw.status, time.Since(start))
	})
}

// Changes returns every alarm state change so far, in order.
func (m *monitor) Changes() []alarms.Change {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.notified)
}
