package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/jsii-runtime-go"

	"github.com/voiceops/opsapi/shared/platform/tables"
	"github.com/voiceops/opsapi/shared/platform/telemetry"
)

// Operating the stack: log retention and tracing (context keys), API
// Gateway access logs, the region's dashboard, and the alarms on the API,
// DynamoDB, evaluation lag and deliveries (the functions' own alarms are
// in alarms.go). Each alarm names its page of docs/runbooks.

// Observability is what the context keys logRetentionDays and tracing set.
type Observability struct {
	// LogRetentionDays applies to every function's log group and to the
	// API access logs.
	LogRetentionDays int
	// Tracing turns X-Ray active tracing on (functions trace their AWS
	// calls and webhook POSTs, shared/platform/tracing) or off (PassThrough).
	Tracing bool
}

// Defaults of the context keys.
const (
	defaultLogRetentionDays = 30
	defaultTracing          = true
)

// retentionDays are the values CloudWatch Logs accepts.
var retentionDays = []int{1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653}

// observabilityFromContext reads logRetentionDays and tracing, per region
// when given as key.<region> (region "" for the global stack).
func observabilityFromContext(c contextReader, region string) (Observability, error) {
	get := func(key, def string) string {
		if region == "" {
			return c.str(key, def)
		}
		return c.regional(key, region, def)
	}
	var o Observability
	days, err := strconv.Atoi(get("logRetentionDays", strconv.Itoa(defaultLogRetentionDays)))
	if err != nil || !slices.Contains(retentionDays, days) {
		return o, fmt.Errorf("context logRetentionDays: want one of %v", retentionDays)
	}
	o.LogRetentionDays = days
	if o.Tracing, err = parseBool(get("tracing", strconv.FormatBool(defaultTracing))); err != nil {
		return o, fmt.Errorf("context tracing: %w", err)
	}
	return o, nil
}

// applyToFunction sets a function's log retention and tracing mode. The
// function and its log group are made by newGoFunction; this overrides
// their properties, so that function code stays in one place.
func (o Observability) applyToFunction(stack awscdk.Stack, id string, fn awslambda.Function) {
	if lg, ok := stack.Node().TryFindChild(jsii.String(id + "Logs")).(awslogs.LogGroup); ok {
		lg.Node().DefaultChild().(awscdk.CfnResource).AddPropertyOverride(jsii.String("RetentionInDays"), o.LogRetentionDays)
	}
	if !o.Tracing {
		fn.Node().DefaultChild().(awscdk.CfnResource).AddPropertyOverride(jsii.String("TracingConfig.Mode"), "PassThrough")
	}
}

// AccessLogFormat is the API Gateway access log line (JSON): the request
// ID (API Gateway's, which the function's access line carries too), the
// route key, status, latencies and the integration's error.
var AccessLogFormat = mustJSON(map[string]string{
	"requestId":          "$context.requestId",
	"routeKey":           "$context.routeKey",
	"status":             "$context.status",
	"latency":            "$context.responseLatency",
	"integrationLatency": "$context.integrationLatency",
	"integrationStatus":  "$context.integrationStatus",
	"integrationError":   "$context.integrationErrorMessage",
	"error":              "$context.error.message",
	"method":             "$context.httpMethod",
	"path":               "$context.path",
	"requestTime":        "$context.requestTimeEpoch",
	"sourceIp":           "$context.identity.sourceIp",
	"responseLength":     "$context.responseLength",
})

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// addAccessLog gives a stage its JSON access log, in a log group of its
// own with the configured retention.
func (o Observability) addAccessLog(stack awscdk.Stack, id, name string, stage awscdk.CfnResource, removal awscdk.RemovalPolicy) {
	lg := awslogs.NewLogGroup(stack, jsii.String(id+"AccessLogs"), &awslogs.LogGroupProps{
		LogGroupName:  jsii.String(name),
		RemovalPolicy: removal,
	})
	lg.Node().DefaultChild().(awscdk.CfnResource).AddPropertyOverride(jsii.String("RetentionInDays"), o.LogRetentionDays)
	stage.AddPropertyOverride(jsii.String("AccessLogSettings"), map[string]any{
		"DestinationArn": lg.LogGroupArn(),
		"Format":         AccessLogFormat,
	})
}

// addObservability adds the regional stack's access logs, retention and
// tracing settings, dashboard and alarms.
func addObservability(stack awscdk.Stack, cfg StackConfig, a alarms, fns []Function, lambdas map[string]awslambda.Function, apis map[Host]httpAPI, tbls map[string]awsdynamodb.Table, q queueResources, ev evaluatorResources) {
	o := cfg.Obs
	for _, f := range fns {
		o.applyToFunction(stack, constructID(f.Name), lambdas[f.Name])
	}
	for _, h := range Hosts {
		if api, ok := apis[h]; ok {
			o.addAccessLog(stack, constructID(string(h)), fmt.Sprintf("/voiceops/%s/api-access/%s", cfg.Region.Name, h), api.stage.Node().DefaultChild().(awscdk.CfnResource), cfg.removalPolicy())
		}
	}
	newDashboard(stack, cfg, fns, lambdas, apis, tbls, q, ev)
	newObservabilityAlarms(a, apis, tbls)
}

// apiMetric is an API Gateway (HTTP API) metric of a host's API.
func apiMetric(api httpAPI, name, stat string, period float64) awscloudwatch.Metric {
	return awscloudwatch.NewMetric(&awscloudwatch.MetricProps{
		Namespace: jsii.String("AWS/ApiGateway"), MetricName: jsii.String(name),
		DimensionsMap: &map[string]*string{"ApiId": api.api.ApiId()},
		Statistic:     jsii.String(stat), Period: awscdk.Duration_Minutes(jsii.Number(period)),
	})
}

// ownMetric is a metric of the telemetry catalog (the functions' EMF lines).
func ownMetric(m telemetry.Metric, stat string, period float64, dims map[string]string, label string) awscloudwatch.Metric {
	dm := map[string]*string{}
	for k, v := range dims {
		dm[k] = jsii.String(v)
	}
	p := &awscloudwatch.MetricProps{
		Namespace: jsii.String(telemetry.Namespace), MetricName: jsii.String(m.Name), DimensionsMap: &dm,
		Statistic: jsii.String(stat), Period: awscdk.Duration_Minutes(jsii.Number(period)),
	}
	if label != "" {
		p.Label = jsii.String(label) // an alarm's metric has none: a label makes it a math query
	}
	return awscloudwatch.NewMetric(p)
}

// tableThrottles is the sum of a table's read and write throttle events.
func tableThrottles(tbl awsdynamodb.Table, id string, period float64) awscloudwatch.MathExpression {
	m := func(name string) awscloudwatch.Metric {
		return awscloudwatch.NewMetric(&awscloudwatch.MetricProps{
			Namespace: jsii.String("AWS/DynamoDB"), MetricName: jsii.String(name),
			DimensionsMap: &map[string]*string{"TableName": tbl.TableName()},
			Statistic:     jsii.String("Sum"), Period: awscdk.Duration_Minutes(jsii.Number(period)),
		})
	}
	return awscloudwatch.NewMathExpression(&awscloudwatch.MathExpressionProps{
		// IDs unique per table: one graph shows every table's expression.
		Expression:   jsii.String(fmt.Sprintf("FILL(r_%s, 0) + FILL(w_%s, 0)", id, id)),
		UsingMetrics: &map[string]awscloudwatch.IMetric{"r_" + id: m("ReadThrottleEvents"), "w_" + id: m("WriteThrottleEvents")},
		Label:        jsii.String(id), Period: awscdk.Duration_Minutes(jsii.Number(period)),
	})
}

func graph(title string, width float64, left ...awscloudwatch.IMetric) awscloudwatch.GraphWidget {
	return awscloudwatch.NewGraphWidget(&awscloudwatch.GraphWidgetProps{
		Title: jsii.String(title), Width: jsii.Number(width), Height: jsii.Number(6), Left: &left,
	})
}

// newDashboard is the region's operations dashboard: API traffic per
// host, evaluation, deliveries, dead letters, dials, DynamoDB throttles
// and the functions.
func newDashboard(stack awscdk.Stack, cfg StackConfig, fns []Function, lambdas map[string]awslambda.Function, apis map[Host]httpAPI, tbls map[string]awsdynamodb.Table, q queueResources, ev evaluatorResources) {
	d := awscloudwatch.NewDashboard(stack, jsii.String("Dashboard"), &awscloudwatch.DashboardProps{
		DashboardName: jsii.String(cfg.prefix() + "-operations"),
	})
	for _, h := range Hosts {
		api, ok := apis[h]
		if !ok {
			continue
		}
		host := map[string]string{telemetry.DimHost: string(h)}
		d.AddWidgets(
			graph(fmt.Sprintf("%s host: requests and errors (API Gateway)", h), 8,
				apiMetric(api, "Count", "Sum", 1), apiMetric(api, "4xx", "Sum", 1), apiMetric(api, "5xx", "Sum", 1)),
			graph(fmt.Sprintf("%s host: latency p50 / p99 (API Gateway, ms)", h), 8,
				apiMetric(api, "Latency", "p50", 1), apiMetric(api, "Latency", "p99", 1)),
			graph(fmt.Sprintf("%s host: as the functions answered (429s, replays)", h), 8,
				ownMetric(telemetry.Requests, "Sum", 1, host, ""), ownMetric(telemetry.Errors5xx, "Sum", 1, host, ""),
				ownMetric(telemetry.Throttled, "Sum", 1, host, ""), ownMetric(telemetry.IdempotentReplays, "Sum", 1, host, ""),
				ownMetric(telemetry.IdempotencyConflicts, "Sum", 1, host, "")),
		)
	}
	var lag, transitions []awscloudwatch.IMetric
	for _, src := range []string{"stream", "schedule"} {
		s := map[string]string{telemetry.DimSource: src}
		lag = append(lag, ownMetric(telemetry.EvaluationLag, "Maximum", 1, s, "lag max ("+src+")"), ownMetric(telemetry.EvaluationLag, "p50", 1, s, "lag p50 ("+src+")"))
		transitions = append(transitions, ownMetric(telemetry.Transitions, "Sum", 1, s, "transitions ("+src+")"), ownMetric(telemetry.RulesEvaluated, "Sum", 1, s, "rules ("+src+")"))
	}
	var outcomes []awscloudwatch.IMetric
	for _, o := range []string{"delivered", "retry", "failed"} {
		outcomes = append(outcomes, ownMetric(telemetry.DeliveryAttempts, "Sum", 5, map[string]string{telemetry.DimOutcome: o}, o))
	}
	outcomes = append(outcomes, ownMetric(telemetry.RetriesScheduled, "Sum", 5, nil, "retries scheduled"))
	minuteMax := &awscloudwatch.MetricOptions{Period: awscdk.Duration_Minutes(jsii.Number(1)), Statistic: jsii.String("Maximum")}
	dlqs := []awscloudwatch.IMetric{
		q.dlq.MetricApproximateNumberOfMessagesVisible(withLabel(minuteMax, "delivery DLQ")),
		q.outboundDLQ.MetricApproximateNumberOfMessagesVisible(withLabel(minuteMax, "outbound DLQ")),
	}
	if ev.shardDLQ != nil {
		dlqs = append(dlqs, ev.shardDLQ.MetricApproximateNumberOfMessagesVisible(withLabel(minuteMax, "evaluator shard DLQ")))
	}
	if ev.streamFailures != nil {
		dlqs = append(dlqs, ev.streamFailures.MetricApproximateNumberOfMessagesVisible(withLabel(minuteMax, "metrics stream failures")))
	}
	var dials []awscloudwatch.IMetric
	for _, o := range []string{"placed", "failed"} {
		dials = append(dials, ownMetric(telemetry.Dials, "Sum", 5, map[string]string{telemetry.DimOutcome: o}, o))
	}
	dials = append(dials, ownMetric(telemetry.IdleEnds, "Sum", 5, nil, "idle ends"))
	var throttles []awscloudwatch.IMetric
	for _, t := range tables.All {
		throttles = append(throttles, tableThrottles(tbls[t.ID], t.ID, 5))
	}
	var errs, durations []awscloudwatch.IMetric
	five := &awscloudwatch.MetricOptions{Period: awscdk.Duration_Minutes(jsii.Number(5)), Statistic: jsii.String("Sum")}
	for _, f := range fns {
		fn := lambdas[f.Name]
		errs = append(errs, fn.MetricErrors(withLabel(five, f.Name)))
		durations = append(durations, fn.MetricDuration(&awscloudwatch.MetricOptions{
			Period: awscdk.Duration_Minutes(jsii.Number(5)), Statistic: jsii.String("p99"), Label: jsii.String(f.Name),
		}))
	}
	var stuck []awscloudwatch.IMetric
	for _, src := range []string{telemetry.SourceRepair, telemetry.SourceDispatch} {
		stuck = append(stuck, ownMetric(telemetry.PendingEventAge, "Maximum", 1, map[string]string{telemetry.DimSource: src}, "pending event age ("+src+")"))
	}
	queueAges := []awscloudwatch.IMetric{
		q.delivery.MetricApproximateAgeOfOldestMessage(withLabel(minuteMax, "delivery queue")),
		q.outbound.MetricApproximateAgeOfOldestMessage(withLabel(minuteMax, "outbound queue")),
	}
	if ev.shardQueue != nil {
		queueAges = append(queueAges, ev.shardQueue.MetricApproximateAgeOfOldestMessage(withLabel(minuteMax, "shard queue")))
	}
	d.AddWidgets(
		graph("Evaluation lag (ms)", 8, lag...),
		graph("Rules evaluated and transitions", 8, transitions...),
		graph("Oldest alert event on its way (ms)", 8, stuck...),
	)
	d.AddWidgets(graph("Oldest message of each queue (s)", 24, queueAges...))
	d.AddWidgets(
		graph("Webhook deliveries by outcome", 8, outcomes...),
		graph("Dead letters waiting", 8, dlqs...),
		graph("Outbound dials and idle ends", 8, dials...),
	)
	d.AddWidgets(
		graph("DynamoDB throttle events per table", 8, throttles...),
		graph("Function errors", 8, errs...),
		graph("Function duration p99 (ms)", 8, durations...),
	)
}

func withLabel(o *awscloudwatch.MetricOptions, label string) *awscloudwatch.MetricOptions {
	c := *o
	c.Label = jsii.String(label)
	return &c
}

// Alarm thresholds (docs/runbooks says what to do for each).
const (
	api5xxRatePercent   = 1     // of a host's requests over 5 minutes, both periods of 10
	api5xxMinRequests   = 20    // fewer requests in 5 minutes never alarm on the rate
	evaluationLagMillis = 60000 // a minute behind the stored data or the tick
	deliveryFailPercent = 20    // of attempts over 15 minutes
	deliveryMinAttempts = 10
)

// apiLatencyP99Millis is each host's p99 latency threshold: the base
// host's conversation turns wait for agents and project functions.
var apiLatencyP99Millis = map[Host]float64{StudioHost: 2000, BaseHost: 10000}

// ObservabilityAlarmCount is how many alarms newObservabilityAlarms adds
// for a stack serving the given number of hosts.
func ObservabilityAlarmCount(hosts int) int { return 2*hosts + len(tables.All) + 2 + 1 }

func newObservabilityAlarms(a alarms, apis map[Host]httpAPI, tbls map[string]awsdynamodb.Table) {
	for _, h := range Hosts {
		api, ok := apis[h]
		if !ok {
			continue
		}
		id := constructID(string(h))
		a.add(alarmSpec{ID: "Api5xxRate" + id, Metric: awscloudwatch.NewMathExpression(&awscloudwatch.MathExpressionProps{
			Expression: jsii.String(fmt.Sprintf("IF(FILL(n, 0) >= %d, 100 * FILL(e, 0) / n, 0)", api5xxMinRequests)),
			UsingMetrics: &map[string]awscloudwatch.IMetric{
				"e": apiMetric(api, "5xx", "Sum", 5), "n": apiMetric(api, "Count", "Sum", 5),
			},
			Label: jsii.String("5xx %"), Period: awscdk.Duration_Minutes(jsii.Number(5)),
		}), Threshold: api5xxRatePercent, Periods: 2, Runbook: RunbookAPI5xx,
			Desc: fmt.Sprintf("More than %d%% of the %s host's requests answered 5xx for 10 minutes", api5xxRatePercent, h)})
		a.add(alarmSpec{ID: "ApiLatencyP99" + id, Metric: apiMetric(api, "Latency", "p99", 5), Threshold: apiLatencyP99Millis[h], Periods: 2,
			Runbook: RunbookAPILatency, Desc: fmt.Sprintf("The %s host's p99 latency was over %.0f ms for 10 minutes", h, apiLatencyP99Millis[h])})
	}
	for _, t := range tables.All {
		// One throttled request is retried by the SDK and normal; throttles
		// in several minutes are not.
		a.add(alarmSpec{ID: "DynamoDBThrottles" + constructID(t.ID), Metric: tableThrottles(tbls[t.ID], t.ID, 1), Threshold: 0,
			Periods: noisyPeriods, Datapoints: noisyDatapoints, Runbook: RunbookDynamoDBThrottles,
			Desc: fmt.Sprintf("DynamoDB throttled requests to the %s table in %d of %d minutes", t.ID, noisyDatapoints, noisyPeriods)})
	}
	for _, src := range []string{"stream", "schedule"} {
		a.add(alarmSpec{ID: "EvaluationLag" + constructID(src), Metric: ownMetric(telemetry.EvaluationLag, "Maximum", 1, map[string]string{telemetry.DimSource: src}, ""),
			Threshold: evaluationLagMillis, Periods: 3, Runbook: RunbookEvaluationLag,
			Desc: fmt.Sprintf("Evaluations (%s) ran more than a minute after their data or tick, 3 minutes running: alerts are late", src)})
	}
	a.add(alarmSpec{ID: "DeliveryFailureRate", Metric: awscloudwatch.NewMathExpression(&awscloudwatch.MathExpressionProps{
		Expression: jsii.String(fmt.Sprintf("IF(FILL(n, 0) >= %d, 100 * (n - FILL(ok, 0)) / n, 0)", deliveryMinAttempts)),
		UsingMetrics: &map[string]awscloudwatch.IMetric{
			"n":  ownMetric(telemetry.DeliveryAttempts, "Sum", 15, nil, ""),
			"ok": ownMetric(telemetry.DeliveryAttempts, "Sum", 15, map[string]string{telemetry.DimOutcome: "delivered"}, ""),
		},
		Label: jsii.String("failed attempts %"), Period: awscdk.Duration_Minutes(jsii.Number(15)),
	}), Threshold: deliveryFailPercent, Periods: 1, Runbook: RunbookDeliveryFailures,
		Desc: fmt.Sprintf("More than %d%% of webhook attempts were not delivered in 15 minutes", deliveryFailPercent)})
}

// observeGlobal gives the global stack's function and stage the same
// retention, tracing and access log.
func observeGlobal(stack awscdk.Stack, o Observability, fn awslambda.Function, stage awscdk.CfnResource, removal awscdk.RemovalPolicy) {
	o.applyToFunction(stack, constructID(MisdirectedFunction), fn)
	o.addAccessLog(stack, "Global", "/voiceops/global/api-access", stage, removal)
}
