package awsproxy

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/voiceops/opsapi/scripts/stack/iam"
)

func TestProxy(t *testing.T) {
	var forwarded atomic.Int32
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		forwarded.Add(1)
		_, _ = io.WriteString(w, `{"Item":{}}`)
	}))
	defer upstream.Close()
	u, _ := url.Parse(upstream.URL)
	arns := ARNs{Partition: "aws", Region: "us-east-1", Account: "123456789012"}
	cfg := arns.Table("cfg")
	p := &Proxy{Upstream: u, ARNs: arns, SecretARN: func(string) string { return "" },
		Principals: map[string]Principal{"KEYALERTS": {Function: "alerts", Role: "AlertsRole", Policy: iam.Policy{Statements: []iam.Statement{
			{Effect: "Allow", Actions: []string{"dynamodb:GetItem", "dynamodb:Scan"}, Resource: []string{cfg}},
			{Effect: "Allow", Actions: []string{"lambda:InvokeFunction"}, Resource: []string{arns.Function("voiceops-us-chat")}},
		}}}},
		Functions: map[string]string{"voiceops-us-chat": "chat"},
		Invoke: func(_ context.Context, fn string, payload []byte, async bool) ([]byte, bool, error) {
			return []byte(`{"from":"` + fn + `"}`), false, nil
		},
	}
	srv := httptest.NewServer(p)
	defer srv.Close()
	do := func(key, target, path, body string) (int, http.Header, string) {
		code, h, b, err := callProxy(srv.URL+path, key, target, body)
		if err != nil {
			t.Fatal(err)
		}
		return code, h, b
	}
	if code, _, b := do("KEYALERTS", "DynamoDB_20120810.GetItem", "/", `{"TableName":"cfg"}`); code != 200 || forwarded.Load() != 1 {
		t.Fatalf("allowed call = %d %s (forwarded %d)", code, b, forwarded.Load())
	}
	code, _, b := do("KEYALERTS", "DynamoDB_20120810.PutItem", "/", `{"TableName":"cfg"}`)
	var e map[string]string
	_ = json.Unmarshal([]byte(b), &e)
	if code != 400 || e["__type"] != "com.amazon.coral.service#AccessDeniedException" || !strings.Contains(e["message"], "dynamodb:PutItem on resource: "+cfg) || forwarded.Load() != 1 {
		t.Fatalf("refused call = %d %s (forwarded %d)", code, b, forwarded.Load())
	}
	if code, _, _ := do("NOBODY", "DynamoDB_20120810.GetItem", "/", `{"TableName":"cfg"}`); code == 200 {
		t.Fatal("an unknown access key was served")
	}
	if code, _, b := do("KEYALERTS", "", "/2015-03-31/functions/voiceops-us-chat/invocations", `{}`); code != 200 || b != `{"from":"chat"}` {
		t.Fatalf("invoke = %d %s", code, b)
	}
	if code, h, _ := do("KEYALERTS", "", "/2015-03-31/functions/voiceops-us-other/invocations", `{}`); code != 403 || h.Get("X-Amzn-Errortype") != "AccessDeniedException" {
		t.Fatalf("invoke of a function not granted = %d %v", code, h)
	}
	d := p.Denials()
	if len(d) != 2 || d[0].Request.Action != "dynamodb:PutItem" || d[1].Request.Action != "lambda:InvokeFunction" {
		t.Fatalf("denials %v", d)
	}
	unused := p.Unused()["alerts"]
	if len(unused) != 1 || unused[0].Action != "dynamodb:Scan" {
		t.Fatalf("unused grants %v, want only dynamodb:Scan", unused)
	}
}

// Injected faults: a denied action is refused as AccessDenied without
// counting as the template's denial, until allowed again; a throttled
// function's DynamoDB calls answer ProvisionedThroughputExceededException
// and are reported by table, read or write; neither reaches moto.
func TestInjectedFaults(t *testing.T) {
	var forwarded atomic.Int32
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		forwarded.Add(1)
		_, _ = io.WriteString(w, `{}`)
	}))
	defer upstream.Close()
	u, _ := url.Parse(upstream.URL)
	arns := ARNs{Partition: "aws", Region: "us-east-1", Account: "123456789012"}
	var throttled []string
	p := &Proxy{Upstream: u, ARNs: arns, SecretARN: func(string) string { return "" },
		Principals: map[string]Principal{"KEY": {Function: "evaluator", Role: "R", Policy: iam.Policy{Statements: []iam.Statement{
			{Effect: "Allow", Actions: []string{"dynamodb:GetItem", "dynamodb:PutItem"}, Resource: []string{arns.Table("cfg")}},
		}}}},
		Throttled: func(fn, table string, write bool) {
			throttled = append(throttled, fmt.Sprint(fn, " ", table, " ", write))
		},
	}
	srv := httptest.NewServer(p)
	defer srv.Close()
	do := func(op string) (int, string) {
		code, _, b, err := callProxy(srv.URL+"/", "KEY", "DynamoDB_20120810."+op, `{"TableName":"cfg"}`)
		if err != nil {
			t.Fatal(err)
		}
		var e map[string]string
		_ = json.Unmarshal([]byte(b), &e)
		return code, e["__type"]
	}
	p.Deny("evaluator", "dynamodb:PutItem")
	if code, typ := do("PutItem"); code != 400 || typ != "com.amazon.coral.service#AccessDeniedException" {
		t.Errorf("denied PutItem = %d %s", code, typ)
	}
	if code, _ := do("GetItem"); code != 200 {
		t.Errorf("GetItem while PutItem is denied = %d", code)
	}
	p.Allow("evaluator", "dynamodb:PutItem")
	if code, _ := do("PutItem"); code != 200 {
		t.Errorf("PutItem allowed again = %d", code)
	}
	if d := p.Denials(); len(d) != 0 {
		t.Errorf("injected refusals counted as the template's: %v", d)
	}
	p.SetThrottle("evaluator", true)
	if code, typ := do("PutItem"); code != 400 || typ != "com.amazon.coral.service#ProvisionedThroughputExceededException" {
		t.Errorf("throttled PutItem = %d %s", code, typ)
	}
	do("GetItem")
	p.SetThrottle("evaluator", false)
	if code, _ := do("GetItem"); code != 200 {
		t.Errorf("GetItem after the throttle = %d", code)
	}
	if fmt.Sprint(throttled) != "[evaluator cfg true evaluator cfg false]" {
		t.Errorf("throttle reports %v", throttled)
	}
	if forwarded.Load() != 3 {
		t.Errorf("%d calls reached moto, want the 3 not faulted", forwarded.Load())
	}
}

// TestBedrockCalls: a function's Converse is checked against its policy
// (the model, and the guardrail it names) and forwarded to the Bedrock
// stand-in, never to moto; without a stand-in it is refused.
func TestBedrockCalls(t *testing.T) {
	var toStandIn, toMoto atomic.Int32
	standin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		toStandIn.Add(1)
		_, _ = io.WriteString(w, `{"output":{"message":{"role":"assistant","content":[{"text":"hi"}]}},"stopReason":"end_turn"}`)
	}))
	defer standin.Close()
	moto := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { toMoto.Add(1) }))
	defer moto.Close()
	su, _ := url.Parse(standin.URL)
	mu, _ := url.Parse(moto.URL)
	arns := ARNs{Partition: "aws", Region: "eu-west-2", Account: "123456789012"}
	const model = "anthropic.claude-3-haiku-20240307-v1:0"
	p := &Proxy{Upstream: mu, Bedrock: su, ARNs: arns, SecretARN: func(string) string { return "" },
		Principals: map[string]Principal{"KEYCHAT": {Function: "chat", Role: "ChatRole", Policy: iam.Policy{Statements: []iam.Statement{
			{Effect: "Allow", Actions: []string{"bedrock:InvokeModel"}, Resource: []string{"arn:aws:bedrock:eu-west-2::foundation-model/" + model}},
			{Effect: "Allow", Actions: []string{"bedrock:ApplyGuardrail"}, Resource: []string{"arn:aws:bedrock:eu-west-2:123456789012:guardrail/gr1"}},
		}}}},
	}
	srv := httptest.NewServer(p.BedrockRuntime())
	defer srv.Close()
	general := httptest.NewServer(p)
	defer general.Close()
	converseAt := func(base, modelID, body string) (int, http.Header, string) {
		req, _ := http.NewRequest("POST", base+"/model/"+url.PathEscape(modelID)+"/converse", strings.NewReader(body))
		req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=KEYCHAT/20260101/eu-west-2/bedrock/aws4_request, SignedHeaders=host, Signature=x")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header, string(b)
	}
	converse := func(modelID, body string) (int, http.Header, string) { return converseAt(srv.URL, modelID, body) }
	// Bedrock Runtime only at its own endpoint (AWS_ENDPOINT_URL_BEDROCK_RUNTIME),
	// and nothing else there.
	if code, h, b := converseAt(general.URL, model, `{}`); code != 404 || h.Get("X-Amzn-ErrorType") != "UnknownOperationException" ||
		!strings.Contains(b, "AWS_ENDPOINT_URL_BEDROCK_RUNTIME") {
		t.Errorf("a Converse at the general endpoint: %d %s %s, want UnknownOperationException", code, h.Get("X-Amzn-ErrorType"), b)
	}
	req, _ := http.NewRequest("POST", srv.URL+"/", strings.NewReader(`{"TableName":"t"}`))
	req.Header.Set("X-Amz-Target", "DynamoDB_20120810.GetItem")
	req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=KEYCHAT/20260101/eu-west-2/dynamodb/aws4_request, SignedHeaders=host, Signature=x")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 404 {
		t.Errorf("a DynamoDB call at the Bedrock Runtime endpoint: %v %v, want 404", resp.StatusCode, err)
	} else {
		resp.Body.Close()
	}
	if code, _, b := converse(model, `{"guardrailConfig":{"guardrailIdentifier":"gr1","guardrailVersion":"1"}}`); code != 200 || !strings.Contains(b, "end_turn") {
		t.Errorf("an allowed model and guardrail: %d %s", code, b)
	}
	for name, c := range map[string][2]string{
		"another model":     {"amazon.titan-text-lite-v1", `{}`},
		"another guardrail": {model, `{"guardrailConfig":{"guardrailIdentifier":"gr2","guardrailVersion":"1"}}`},
	} {
		code, h, b := converse(c[0], c[1])
		if code != 403 || h.Get("X-Amzn-ErrorType") != "AccessDeniedException" || !strings.Contains(b, "bedrock:") {
			t.Errorf("%s: %d %v %s, want AccessDeniedException", name, code, h.Get("X-Amzn-ErrorType"), b)
		}
	}
	if toStandIn.Load() != 1 || toMoto.Load() != 0 {
		t.Errorf("forwarded to the stand-in %d times and to moto %d times, want 1 and 0", toStandIn.Load(), toMoto.Load())
	}
	if d := p.Denials(); len(d) != 2 || d[0].Function != "chat" {
		t.Errorf("denials: %v", d)
	}
	taken := p.TakeDenials(func(d Denial) bool { return d.Request.Action == "bedrock:ApplyGuardrail" })
	if len(taken) != 1 || taken[0].Request.Resource != "arn:aws:bedrock:eu-west-2:123456789012:guardrail/gr2" {
		t.Errorf("taken denials: %v", taken)
	}
	if d := p.Denials(); len(d) != 1 || d[0].Request.Resource != "arn:aws:bedrock:eu-west-2::foundation-model/amazon.titan-text-lite-v1" {
		t.Errorf("denials left: %v", d)
	}
	p.Bedrock = nil
	if code, h, _ := converse(model, `{}`); code != 503 || h.Get("X-Amzn-ErrorType") != "ServiceUnavailableException" {
		t.Errorf("without a stand-in: %d %s", code, h.Get("X-Amzn-ErrorType"))
	}
}

// TestObserveCalls: each forwarded call is reported once answered, with
// its function, operation, resource and sizes, and its upstream's time
// within the proxy's; refused calls never reached upstream and are not
// reported; without an observer nothing is.
func TestObserveCalls(t *testing.T) {
	const hold = 20 * time.Millisecond
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(hold)
		_, _ = io.WriteString(w, `{"Items":[],"Count":0}`)
	}))
	defer upstream.Close()
	u, _ := url.Parse(upstream.URL)
	arns := ARNs{Partition: "aws", Region: "us-east-1", Account: "123456789012"}
	p := &Proxy{Upstream: u, ARNs: arns, SecretARN: func(string) string { return "" },
		Principals: map[string]Principal{"KEY": {Function: "conversations", Role: "R", Policy: iam.Policy{Statements: []iam.Statement{
			{Effect: "Allow", Actions: []string{"dynamodb:Query"}, Resource: []string{arns.Table("conv")}},
		}}}},
	}
	srv := httptest.NewServer(p)
	defer srv.Close()
	do := func(op string) {
		if _, _, _, err := callProxy(srv.URL+"/", "KEY", "DynamoDB_20120810."+op, `{"TableName":"conv"}`); err != nil {
			t.Fatal(err)
		}
	}
	do("Query") // no observer yet
	var got []Timing
	p.ObserveCalls(func(tm Timing) { got = append(got, tm) })
	do("Query")
	do("Scan") // refused: not forwarded
	p.ObserveCalls(nil)
	do("Query")
	if len(got) != 1 {
		t.Fatalf("observed %d calls, want the one forwarded while observing: %+v", len(got), got)
	}
	tm := got[0]
	if tm.Function != "conversations" || tm.Operation != "Query" || tm.Resource != arns.Table("conv") ||
		tm.RequestBytes != len(`{"TableName":"conv"}`) || tm.ResponseBytes != len(`{"Items":[],"Count":0}`) || string(tm.Answer) != `{"Items":[],"Count":0}` {
		t.Errorf("timing %+v", tm)
	}
	if tm.Upstream < hold || tm.Total < tm.Upstream || tm.Start.IsZero() {
		t.Errorf("upstream %v (held %v), total %v: the upstream's time must hold its wait and lie within the total", tm.Upstream, hold, tm.Total)
	}
}

// TestDynamoDBWritesReachMotoAlone: a DynamoDB write sent with other
// calls reaches the upstream with no other DynamoDB call in flight (moto
// does not isolate concurrent writes; DynamoDB applies each atomically),
// while reads still overlap one another and SQS calls are not held back.
func TestDynamoDBWritesReachMotoAlone(t *testing.T) {
	var mu sync.Mutex
	inFlight := map[string]int{} // by operation
	var most, mostReads int
	var shared []string // a DynamoDB call that met a write in flight
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		op := r.Header.Get("X-Amz-Target")
		write := !strings.HasSuffix(op, ".GetItem") && !strings.HasPrefix(op, "AmazonSQS.")
		mu.Lock()
		total, reads := 0, 0
		for o, n := range inFlight {
			total += n
			if strings.HasSuffix(o, ".GetItem") {
				reads += n
			}
		}
		dynamo := total - inFlight["AmazonSQS.ReceiveMessage"]
		writing := dynamo - reads
		// A write meeting any DynamoDB call, or any call meeting a write.
		if strings.HasPrefix(op, "DynamoDB_") && (write && dynamo > 0 || writing > 0) {
			shared = append(shared, op)
		}
		inFlight[op]++
		most = max(most, total+1)
		if strings.HasSuffix(op, ".GetItem") {
			mostReads = max(mostReads, reads+1)
		}
		mu.Unlock()
		time.Sleep(20 * time.Millisecond)
		mu.Lock()
		inFlight[op]--
		mu.Unlock()
		_, _ = io.WriteString(w, `{}`)
	}))
	defer upstream.Close()
	u, _ := url.Parse(upstream.URL)
	arns := ARNs{Partition: "aws", Region: "us-east-1", Account: "123456789012"}
	p := &Proxy{Upstream: u, ARNs: arns, SecretARN: func(string) string { return "" },
		Principals: map[string]Principal{"KEY": {Function: "evaluator", Role: "R", Policy: iam.Policy{Statements: []iam.Statement{
			{Effect: "Allow", Actions: []string{"dynamodb:GetItem", "dynamodb:UpdateItem", "dynamodb:PutItem", "dynamodb:TransactWriteItems"}, Resource: []string{arns.Table("cfg")}},
			{Effect: "Allow", Actions: []string{"sqs:ReceiveMessage"}, Resource: []string{arns.Queue("q")}},
		}}}},
	}
	srv := httptest.NewServer(p)
	defer srv.Close()
	send := func(target, body string) {
		code, _, b, err := callProxy(srv.URL+"/", "KEY", target, body)
		if err != nil || code != http.StatusOK {
			t.Errorf("%s: %d %s %v", target, code, b, err)
		}
	}
	at := func(calls map[string]string) {
		mu.Lock()
		most, mostReads, shared = 0, 0, nil
		mu.Unlock()
		var wg sync.WaitGroup
		for range 4 {
			for target, body := range calls {
				wg.Go(func() { send(target, body) })
			}
		}
		wg.Wait()
	}
	table := `{"TableName":"cfg","Key":{"pk":{"S":"a"}}}`
	at(map[string]string{
		"DynamoDB_20120810.GetItem":            table,
		"DynamoDB_20120810.PutItem":            `{"TableName":"cfg","Item":{"pk":{"S":"a"}}}`,
		"DynamoDB_20120810.UpdateItem":         table,
		"DynamoDB_20120810.TransactWriteItems": `{"TransactItems":[{"Update":{"TableName":"cfg","Key":{"pk":{"S":"a"}}}}]}`,
		"AmazonSQS.ReceiveMessage":             `{"QueueUrl":"http://localhost/123456789012/q"}`,
	})
	if len(shared) > 0 {
		t.Errorf("DynamoDB calls reached the upstream with a write in flight, or a write with calls in flight: %v", shared)
	}
	if most < 2 {
		t.Errorf("at most %d call in flight: SQS calls must not wait for the DynamoDB writes", most)
	}
	at(map[string]string{"DynamoDB_20120810.GetItem": table})
	if mostReads < 2 {
		t.Errorf("GetItems reached the upstream %d at a time: reads must not wait for each other", mostReads)
	}
}

// callProxy sends a call to the proxy at url signed with the access key
// ID key, as a function's SDK would (target its X-Amz-Target, none when
// ""), and returns the answer. It does not fail the test: goroutines call
// it too.
func callProxy(url, key, target, body string) (int, http.Header, string, error) {
	req, err := http.NewRequest("POST", url, strings.NewReader(body))
	if err != nil {
		return 0, nil, "", err
	}
	req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential="+key+"/20260101/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=x")
	if target != "" {
		req.Header.Set("X-Amz-Target", target)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b), err
}
