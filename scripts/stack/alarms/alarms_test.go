package alarms

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"
)

var nan = math.NaN()

func TestStatistic(t *testing.T) {
	vs := []float64{4, 1, 3, 2, 10}
	for _, tt := range []struct {
		stat string
		want float64
		ok   bool
	}{
		{"Sum", 20, true}, {"Average", 4, true}, {"Minimum", 1, true}, {"Maximum", 10, true}, {"SampleCount", 5, true},
		{"p50", 3, true}, {"p99", 10, true}, {"p20", 1, true}, {"p80", 4, true}, {"p99.9", 10, true},
		{"Median", 0, false}, {"p0", 0, false}, {"p101", 0, false}, {"px", 0, false},
	} {
		got, ok := Statistic(tt.stat, vs)
		if ok != tt.ok || ok && got != tt.want {
			t.Errorf("%s = %v %v, want %v %v", tt.stat, got, ok, tt.want, tt.ok)
		}
	}
	if _, ok := Statistic("Sum", nil); ok {
		t.Error("Sum of no values is data; want missing")
	}
}

func TestNext(t *testing.T) {
	x, o := 5.0, 0.0 // breaching and not, against > 1
	for _, tt := range []struct {
		name    string
		m, n    int
		missing string
		current State
		points  []float64
		want    State
	}{
		{"1 of 1 breaching", 1, 1, Missing, OK, []float64{x}, Alarming},
		{"1 of 1 fine", 1, 1, Missing, Alarming, []float64{o}, OK},
		{"3 of 3 two breaching", 3, 3, Missing, OK, []float64{o, x, x}, OK},
		{"3 of 3 all breaching", 3, 3, Missing, OK, []float64{x, x, x}, Alarming},
		{"2 of 3 two breaching", 2, 3, Missing, OK, []float64{x, o, x}, Alarming},
		{"2 of 3 one breaching", 2, 3, Missing, Alarming, []float64{o, o, x}, OK},
		{"2 of 5 spread", 2, 5, NotBreaching, OK, []float64{x, o, o, o, x}, Alarming},

		{"missing: none is insufficient", 1, 3, Missing, OK, []float64{nan, nan, nan}, InsufficientData},
		{"missing: fewer than M, all breaching", 3, 3, Missing, OK, []float64{nan, x, nan}, Alarming},
		{"missing: fewer than M, one fine", 3, 3, Missing, Alarming, []float64{nan, x, o}, OK},
		{"missing: enough present", 2, 3, Missing, OK, []float64{x, nan, x}, Alarming},

		{"notBreaching: none is OK", 1, 3, NotBreaching, Alarming, []float64{nan, nan, nan}, OK},
		{"notBreaching: gaps count as fine", 3, 3, NotBreaching, OK, []float64{x, nan, x}, OK},
		{"notBreaching: enough breaching", 2, 3, NotBreaching, OK, []float64{x, nan, x}, Alarming},

		{"breaching: none is ALARM", 1, 3, Breaching, OK, []float64{nan, nan, nan}, Alarming},
		{"breaching: gaps count as bad", 3, 3, Breaching, OK, []float64{x, nan, x}, Alarming},
		{"breaching: a fine one keeps OK", 3, 3, Breaching, OK, []float64{x, nan, o}, OK},

		{"ignore: none keeps ALARM", 1, 3, IgnoreMissing, Alarming, []float64{nan, nan, nan}, Alarming},
		{"ignore: none keeps OK", 1, 3, IgnoreMissing, OK, []float64{nan, nan, nan}, OK},
		{"ignore: fewer than M keeps", 3, 3, IgnoreMissing, OK, []float64{nan, x, nan}, OK},
		{"ignore: enough present", 2, 3, IgnoreMissing, OK, []float64{x, nan, x}, Alarming},
		{"ignore: enough present, fine", 2, 3, IgnoreMissing, Alarming, []float64{o, nan, o}, OK},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := &Alarm{Name: "a", Comparison: GreaterThan, Threshold: 1, EvaluationPeriods: tt.n, DatapointsToAlarm: tt.m, TreatMissingData: tt.missing}
			if got := a.Next(tt.current, tt.points); got != tt.want {
				t.Errorf("Next(%s, %v) = %s, want %s", tt.current, tt.points, got, tt.want)
			}
		})
	}
}

func TestComparisons(t *testing.T) {
	for _, tt := range []struct {
		op            string
		below, at, up bool
	}{
		{GreaterThan, false, false, true},
		{GreaterThanOrEqual, false, true, true},
		{LessThan, true, false, false},
		{LessThanOrEqual, true, true, false},
	} {
		a := &Alarm{Comparison: tt.op, Threshold: 10}
		if a.breaches(9) != tt.below || a.breaches(10) != tt.at || a.breaches(11) != tt.up {
			t.Errorf("%s: 9 %v, 10 %v, 11 %v; want %v %v %v", tt.op, a.breaches(9), a.breaches(10), a.breaches(11), tt.below, tt.at, tt.up)
		}
	}
}

func TestExpressions(t *testing.T) {
	vars := map[string]float64{"n": 40, "e": 2, "z": 0, "gone": nan}
	for _, tt := range []struct {
		expr string
		want float64 // NaN: missing
	}{
		{"IF(FILL(n, 0) >= 20, 100 * FILL(e, 0) / n, 0)", 5},
		{"IF(FILL(gone, 0) >= 20, 100 * FILL(e, 0) / gone, 0)", 0},
		{"FILL(gone, 0) + FILL(e, 0)", 2},
		{"gone + e", nan},
		{"e / z", nan},
		{"IF(e > 5, 1)", nan},
		{"IF(e < 5 AND n > 5, 1, 2)", 1},
		{"IF(e > 5 OR n < 5, 1, 2)", 2},
		{"-e + 2 * (n - 38) / 4", -1},
		{"MAX(e, n) - MIN(e, n) + ABS(-1)", 39},
		{"e == 2", 1},
		{"e != 2", 0},
		{"(n - FILL(e, 0)) / n * 100", 95},
	} {
		e, err := parseExpr(tt.expr)
		if err != nil {
			t.Errorf("%s: %v", tt.expr, err)
			continue
		}
		got := e.eval(vars)
		if math.IsNaN(tt.want) != math.IsNaN(got) || !math.IsNaN(got) && math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("%s = %v, want %v", tt.expr, got, tt.want)
		}
	}
	for _, bad := range []string{"", "1 +", "FILL(a)", "ANOMALY_DETECTION_BAND(m1)", "(a", "a = b", "a $ b", "IF(a, b, c, d)"} {
		if _, err := parseExpr(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

// props is an alarm's template properties, as JSON.
func props(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

const dlqAlarm = `{"AlarmName":"dlq","ComparisonOperator":"GreaterThanThreshold","Threshold":0,"EvaluationPeriods":1,
	"MetricName":"ApproximateNumberOfMessagesVisible","Namespace":"AWS/SQS","Dimensions":[{"Name":"QueueName","Value":"q-dlq"}],
	"Period":60,"Statistic":"Maximum","TreatMissingData":"notBreaching","AlarmActions":["arn:aws:sns:us-east-1:123456789012:t"],
	"OKActions":["arn:aws:sns:us-east-1:123456789012:t"]}`

const rateAlarm = `{"AlarmName":"rate","ComparisonOperator":"GreaterThanThreshold","Threshold":1,"EvaluationPeriods":2,
	"TreatMissingData":"notBreaching","Metrics":[
	{"Id":"expr_1","Expression":"IF(FILL(n, 0) >= 20, 100 * FILL(e, 0) / n, 0)","ReturnData":true},
	{"Id":"e","MetricStat":{"Metric":{"Dimensions":[{"Name":"ApiId","Value":"api1"}],"MetricName":"5xx","Namespace":"AWS/ApiGateway"},"Period":300,"Stat":"Sum"},"ReturnData":false},
	{"Id":"n","MetricStat":{"Metric":{"Dimensions":[{"Name":"ApiId","Value":"api1"}],"MetricName":"Count","Namespace":"AWS/ApiGateway"},"Period":300,"Stat":"Sum"},"ReturnData":false}]}`

func TestParse(t *testing.T) {
	a, err := Parse("DLQ1", props(t, dlqAlarm))
	if err != nil {
		t.Fatal(err)
	}
	want := MetricStat{Metric: NewMetric("AWS/SQS", "ApproximateNumberOfMessagesVisible", map[string]string{"QueueName": "q-dlq"}), Stat: "Maximum", Period: time.Minute}
	if a.Name != "dlq" || a.Period != time.Minute || a.DatapointsToAlarm != 1 || len(a.Metrics()) != 1 || a.Metrics()[0] != want ||
		!a.ActionsEnabled || len(a.Actions(Alarming)) != 1 || len(a.Actions(OK)) != 1 || len(a.Actions(InsufficientData)) != 0 {
		t.Errorf("parsed %+v", a)
	}
	r, err := Parse("Rate", props(t, rateAlarm))
	if err != nil {
		t.Fatal(err)
	}
	if r.Period != 5*time.Minute || len(r.Queries) != 3 || len(r.Metrics()) != 2 {
		t.Errorf("parsed %+v", r)
	}
	for name, bad := range map[string]string{
		"no threshold":       `{"ComparisonOperator":"GreaterThanThreshold","EvaluationPeriods":1,"MetricName":"x","Namespace":"n","Period":60,"Statistic":"Sum"}`,
		"anomaly band":       `{"ComparisonOperator":"LessThanLowerThreshold","Threshold":1,"EvaluationPeriods":1,"MetricName":"x","Namespace":"n","Period":60,"Statistic":"Sum"}`,
		"M over N":           `{"ComparisonOperator":"GreaterThanThreshold","Threshold":1,"EvaluationPeriods":1,"DatapointsToAlarm":2,"MetricName":"x","Namespace":"n","Period":60,"Statistic":"Sum"}`,
		"unknown statistic":  `{"ComparisonOperator":"GreaterThanThreshold","Threshold":1,"EvaluationPeriods":1,"MetricName":"x","Namespace":"n","Period":60,"Statistic":"Mode"}`,
		"unknown missing":    `{"ComparisonOperator":"GreaterThanThreshold","Threshold":1,"EvaluationPeriods":1,"MetricName":"x","Namespace":"n","Period":60,"Statistic":"Sum","TreatMissingData":"zero"}`,
		"no metric":          `{"ComparisonOperator":"GreaterThanThreshold","Threshold":1,"EvaluationPeriods":1}`,
		"expression unknown": `{"ComparisonOperator":"GreaterThanThreshold","Threshold":1,"EvaluationPeriods":1,"Metrics":[{"Id":"e","Expression":"m + 1","Period":60}]}`,
	} {
		if _, err := Parse("X", props(t, bad)); err == nil {
			t.Errorf("%s: parsed", name)
		}
	}
}

// clock is a settable clock.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

var epoch = time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)

func TestDatapointsArePeriodsBeforeNow(t *testing.T) {
	a, err := Parse("DLQ", props(t, dlqAlarm))
	if err != nil {
		t.Fatal(err)
	}
	a.EvaluationPeriods = 3
	s := NewStore()
	m := a.Metrics()[0].Metric
	s.Put(m, epoch.Add(10*time.Second), 1)
	s.Put(m, epoch.Add(50*time.Second), 4)
	s.Put(m, epoch.Add(2*time.Minute+5*time.Second), 2)
	s.Put(m, epoch.Add(3*time.Minute+1*time.Second), 9) // the current, incomplete period: not evaluated
	s.Put(NewMetric("AWS/SQS", m.Name, nil), epoch.Add(2*time.Minute), 100)
	got := a.Datapoints(s, epoch.Add(3*time.Minute+30*time.Second))
	if len(got) != 3 || got[0] != 4 || !math.IsNaN(got[1]) || got[2] != 2 {
		t.Errorf("datapoints %v, want [4 NaN 2]", got)
	}
}

func TestEvaluatorChangesAndNotifies(t *testing.T) {
	c := &clock{t: epoch}
	a, err := Parse("DLQ", props(t, dlqAlarm))
	if err != nil {
		t.Fatal(err)
	}
	s := NewStore()
	e := &Evaluator{Store: s, Alarms: []*Alarm{a}, Now: c.now}
	if e.State("dlq") != InsufficientData {
		t.Fatalf("a new alarm is %s", e.State("dlq"))
	}
	c.t = epoch.Add(time.Minute)
	ch := e.Evaluate()
	if len(ch) != 1 || ch[0].Old != InsufficientData || ch[0].New != OK {
		t.Fatalf("first evaluation: %+v, want INSUFFICIENT_DATA -> OK (missing is not breaching)", ch)
	}
	alarmed := e.Entered("dlq", Alarming)
	s.Put(a.Metrics()[0].Metric, c.t.Add(5*time.Second), 3)
	c.t = c.t.Add(30 * time.Second)
	if ch := e.Evaluate(); len(ch) != 0 {
		t.Fatalf("a datapoint of the current period changed the state: %+v", ch)
	}
	c.t = c.t.Add(30 * time.Second)
	ch = e.Evaluate()
	if len(ch) != 1 || ch[0].New != Alarming || ch[0].Old != OK {
		t.Fatalf("after the period: %+v, want OK -> ALARM", ch)
	}
	select {
	case <-alarmed:
	default:
		t.Fatal("Entered(ALARM) not closed")
	}
	n := ch[0].Notification("123456789012", "us-east-1")
	var got map[string]any
	if err := json.Unmarshal([]byte(n.JSON()), &got); err != nil {
		t.Fatal(err)
	}
	trig, _ := got["Trigger"].(map[string]any)
	if got["AlarmName"] != "dlq" || got["NewStateValue"] != "ALARM" || got["OldStateValue"] != "OK" ||
		!strings.HasPrefix(got["NewStateReason"].(string), "Threshold Crossed: 1 out of the last 1 datapoints [3] was greater than the threshold (0)") ||
		got["StateChangeTime"] != "2026-11-28T10:02:00.000+0000" || trig["MetricName"] != "ApproximateNumberOfMessagesVisible" ||
		trig["Namespace"] != "AWS/SQS" || trig["Statistic"] != "MAXIMUM" || trig["Period"] != 60.0 || trig["Threshold"] != 0.0 ||
		trig["ComparisonOperator"] != "GreaterThanThreshold" || trig["TreatMissingData"] != "notBreaching" {
		t.Errorf("notification %s", n.JSON())
	}
	c.t = c.t.Add(time.Minute)
	if ch := e.Evaluate(); len(ch) != 1 || ch[0].New != OK ||
		ch[0].Reason != "Threshold Crossed: no datapoints were received for 1 periods and 1 missing datapoints were treated as [NonBreaching]." {
		t.Fatalf("a period without data: %+v, want ALARM -> OK, missing data treated as not breaching", ch)
	}
	if ch := e.Evaluate(); len(ch) != 0 {
		t.Fatalf("no change reported twice: %+v", ch)
	}
}

func TestMathAlarmOverPeriods(t *testing.T) {
	c := &clock{t: epoch}
	a, err := Parse("Rate", props(t, rateAlarm))
	if err != nil {
		t.Fatal(err)
	}
	s := NewStore()
	e := &Evaluator{Store: s, Alarms: []*Alarm{a}, Now: c.now}
	count := NewMetric("AWS/ApiGateway", "Count", map[string]string{"ApiId": "api1"})
	errs := NewMetric("AWS/ApiGateway", "5xx", map[string]string{"ApiId": "api1"})
	put := func(at time.Time, requests, failed int) {
		for i := range requests {
			s.Put(count, at, 1)
			s.Put(errs, at, float64(min(1, max(0, failed-i))))
		}
	}
	put(epoch, 30, 3) // 10%
	c.t = epoch.Add(5 * time.Minute)
	if ch := e.Evaluate(); len(ch) != 1 || ch[0].New != OK {
		t.Fatalf("one bad period of two: %+v, want OK", ch)
	}
	put(c.t, 19, 19) // under the 20 requests the rate needs
	c.t = c.t.Add(5 * time.Minute)
	if ch := e.Evaluate(); len(ch) != 0 {
		t.Fatalf("a quiet period alarmed: %+v", ch)
	}
	put(c.t, 20, 1) // 5%
	c.t = c.t.Add(5 * time.Minute)
	if ch := e.Evaluate(); len(ch) != 0 {
		t.Fatalf("%+v", ch)
	}
	put(c.t, 100, 2) // 2%
	c.t = c.t.Add(5 * time.Minute)
	ch := e.Evaluate()
	if len(ch) != 1 || ch[0].New != Alarming || ch[0].Datapoints[0] != 5 || ch[0].Datapoints[1] != 2 {
		t.Fatalf("two bad periods: %+v, want ALARM on [5 2]", ch)
	}
	if tr := ch[0].Notification("1", "r").Trigger; len(tr.Metrics) != 3 || tr.MetricName != "" {
		t.Errorf("a math alarm's trigger: %+v", tr)
	}
}

func TestScaled(t *testing.T) {
	c := &clock{t: epoch}
	now := Scaled(c.now, 60)
	c.t = epoch.Add(5 * time.Second)
	if got := now(); !got.Equal(epoch.Add(5 * time.Minute)) {
		t.Errorf("5 s at 60x = %s, want 5 minutes on", got.Sub(epoch))
	}
}

func TestParseEMF(t *testing.T) {
	line := `{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"VoiceOps","Dimensions":[["Host"],["Host","Route"]],` +
		`"Metrics":[{"Name":"Latency","Unit":"Milliseconds"},{"Name":"Requests","Unit":"Count"}]}]},"Latency":[3,4],"Requests":2,"Host":"studio","Route":"GET /x"}`
	got := ParseEMF([]byte(line))
	want := map[Metric][]float64{
		NewMetric("VoiceOps", "Latency", map[string]string{"Host": "studio"}):                     {3, 4},
		NewMetric("VoiceOps", "Latency", map[string]string{"Host": "studio", "Route": "GET /x"}):  {3, 4},
		NewMetric("VoiceOps", "Requests", map[string]string{"Host": "studio"}):                    {2},
		NewMetric("VoiceOps", "Requests", map[string]string{"Host": "studio", "Route": "GET /x"}): {2},
	}
	if len(got) != len(want) {
		t.Fatalf("%d data, want %d: %+v", len(got), len(want), got)
	}
	for _, d := range got {
		w := want[d.Metric]
		if len(w) != len(d.Values) || w[0] != d.Values[0] {
			t.Errorf("%s = %v, want %v", d.Metric, d.Values, w)
		}
	}
	noDims := ParseEMF([]byte(`{"_aws":{"CloudWatchMetrics":[{"Namespace":"VoiceOps","Dimensions":[[]],"Metrics":[{"Name":"IdleEnds"}]}]},"IdleEnds":1}`))
	if len(noDims) != 1 || noDims[0].Metric != NewMetric("VoiceOps", "IdleEnds", nil) {
		t.Errorf("dimensionless: %+v", noDims)
	}
	for _, other := range []string{`{"level":"info","msg":"x"}`, `not json "_aws"`, `START RequestId: 1`} {
		if d := ParseEMF([]byte(other)); len(d) != 0 {
			t.Errorf("%s: %+v", other, d)
		}
	}
}

func TestStorePrune(t *testing.T) {
	s := NewStore()
	m := NewMetric("n", "x", nil)
	s.Put(m, epoch, 1)
	s.Put(m, epoch.Add(time.Hour), 2)
	s.Put(m, epoch, math.Inf(1))
	s.Prune(epoch.Add(time.Minute))
	if got := s.Values(m, epoch.Add(-time.Hour), epoch.Add(2*time.Hour)); len(got) != 1 || got[0] != 2 {
		t.Errorf("after prune: %v", got)
	}
	if !s.Seen("n", "x") || s.Seen("n", "y") {
		t.Error("Seen")
	}
}
