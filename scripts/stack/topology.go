package main

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/voiceops/opsapi/scripts/stack/apigw"
	"github.com/voiceops/opsapi/scripts/stack/awsproxy"
	"github.com/voiceops/opsapi/scripts/stack/cfn"
	"github.com/voiceops/opsapi/scripts/stack/esm"
	"github.com/voiceops/opsapi/scripts/stack/iam"
)

// functionMetadata is infra.FunctionMetadata: the template names each
// function's source directory under this key.
const functionMetadata = "voiceops:function"

// function is one AWS::Lambda::Function of the template, resolved.
type function struct {
	LogicalID    string
	Name         string // functions/<Name>
	FunctionName string // physical
	RoleID       string
	Env          map[string]string
	Timeout      time.Duration
	MemoryMB     int
	Policy       iam.Policy
}

// topology is what the runner reads from the template once the stateful
// resources exist.
type topology struct {
	Functions map[string]*function // by logical ID
	APIs      map[string]*api      // by logical ID
	SQS       []esm.SQSMapping
	Streams   []esm.StreamMapping
	Schedules []esm.Schedule
}

type api struct {
	LogicalID string
	Name      string // the API's Name, e.g. voiceops-us-studio
	ID        string
	Routes    []apigw.Route
	CORS      *apigw.CORS // its CorsConfiguration; nil for none
	// StageVariables are the $default stage's (AWS::ApiGatewayV2::Stage),
	// given to every event as API Gateway does.
	StageVariables map[string]string
}

// byName returns the function of a source name.
func (t topology) byName(name string) *function {
	for _, f := range t.Functions {
		if f.Name == name {
			return f
		}
	}
	return nil
}

// readFunctions resolves every function's settings and its role's
// policies. v must already hold the stateful resources and the APIs.
func readFunctions(t cfn.Template, v *cfn.Values, stackName string, arns awsproxy.ARNs) (map[string]*function, error) {
	out := map[string]*function{}
	for _, id := range t.OfType("AWS::Lambda::Function") {
		r := t.Resources[id]
		name, _ := r.Metadata[functionMetadata].(string)
		if name == "" {
			return nil, fmt.Errorf("function %s has no %q metadata naming its functions/<name> (infra/functions.go writes it)", id, functionMetadata)
		}
		fnName, _ := r.Properties["FunctionName"].(string)
		if fnName == "" {
			fnName = stackName + "-" + id
		}
		f := &function{LogicalID: id, Name: name, FunctionName: fnName, Env: map[string]string{}, Timeout: 3 * time.Second, MemoryMB: 128}
		if x, ok := r.Properties["Timeout"].(float64); ok {
			f.Timeout = time.Duration(x) * time.Second
		}
		if x, ok := r.Properties["MemorySize"].(float64); ok {
			f.MemoryMB = int(x)
		}
		if role, ok := r.Properties["Role"].(map[string]any); ok {
			if ga, ok := role["Fn::GetAtt"].([]any); ok && len(ga) == 2 {
				f.RoleID, _ = ga[0].(string)
			}
		}
		out[id] = f
		v.Set(id, fnName, map[string]string{"Arn": arns.Function(fnName)})
	}
	for _, id := range t.OfType("AWS::IAM::Role") {
		name := stackName + "-" + id
		v.Set(id, name, map[string]string{"Arn": fmt.Sprintf("arn:aws:iam::%s:role/%s", arns.Account, name), "RoleId": "AROA" + strings.ToUpper(id)})
	}
	for _, f := range out {
		env, err := v.Resolve(t.Resources[f.LogicalID].Properties["Environment"])
		if err != nil {
			return nil, fmt.Errorf("function %s environment: %w", f.Name, err)
		}
		if e, ok := env.(map[string]any); ok {
			vars, _ := e["Variables"].(map[string]any)
			for k, x := range vars {
				f.Env[k] = fmt.Sprint(x)
			}
		}
	}
	// Identity policies: AWS::IAM::Policy names its roles.
	for _, id := range t.OfType("AWS::IAM::Policy") {
		r := t.Resources[id]
		doc, err := v.Resolve(r.Properties["PolicyDocument"])
		if err != nil {
			return nil, fmt.Errorf("policy %s: %w", id, err)
		}
		stmts, err := iam.ParseStatements(doc)
		if err != nil {
			return nil, fmt.Errorf("policy %s: %w", id, err)
		}
		roles, _ := r.Properties["Roles"].([]any)
		for _, role := range roles {
			ref, _ := role.(map[string]any)
			roleID, _ := ref["Ref"].(string)
			for _, f := range out {
				if f.RoleID == roleID {
					f.Policy.Statements = append(f.Policy.Statements, stmts...)
				}
			}
		}
	}
	return out, nil
}

// readRoutes reads each HTTP API's routes and the function behind each.
func readRoutes(t cfn.Template, fns map[string]*function, apis map[string]*api) error {
	for _, id := range t.OfType("AWS::ApiGatewayV2::Route") {
		p := t.Resources[id].Properties
		apiID := refOf(p["ApiId"])
		a, ok := apis[apiID]
		if !ok {
			return fmt.Errorf("route %s: unknown API %q", id, apiID)
		}
		key, _ := p["RouteKey"].(string)
		integ := ""
		if j, ok := p["Target"].(map[string]any)["Fn::Join"].([]any); ok && len(j) == 2 {
			parts, _ := j[1].([]any)
			for _, x := range parts {
				if r := refOf(x); r != "" {
					integ = r
				}
			}
		}
		ir, ok := t.Resources[integ]
		if !ok || ir.Type != "AWS::ApiGatewayV2::Integration" {
			return fmt.Errorf("route %s (%s): its target is not an integration of the template", id, key)
		}
		fnID := getAttOf(ir.Properties["IntegrationUri"])
		f, ok := fns[fnID]
		if !ok {
			return fmt.Errorf("route %s (%s): the integration invokes no function of the template", id, key)
		}
		a.Routes = append(a.Routes, apigw.Route{Key: key, Function: f.Name})
	}
	for _, a := range apis {
		sort.Slice(a.Routes, func(i, j int) bool { return a.Routes[i].Key < a.Routes[j].Key })
	}
	return nil
}

// readMappings reads the event source mappings and the schedules.
func readMappings(t cfn.Template, v *cfn.Values, fns map[string]*function, queueURLs map[string]string, region string) (topology, error) {
	var top topology
	for _, id := range t.OfType("AWS::Lambda::EventSourceMapping") {
		p := t.Resources[id].Properties
		f, ok := fns[refOf(p["FunctionName"])]
		if !ok {
			return top, fmt.Errorf("mapping %s: unknown function", id)
		}
		src, err := v.String(p["EventSourceArn"])
		if err != nil {
			return top, fmt.Errorf("mapping %s: %w", id, err)
		}
		batch := intOf(p["BatchSize"], 10)
		window := time.Duration(intOf(p["MaximumBatchingWindowInSeconds"], 0)) * time.Second
		report := false
		if types, ok := p["FunctionResponseTypes"].([]any); ok {
			for _, x := range types {
				report = report || x == "ReportBatchItemFailures"
			}
		}
		switch {
		case strings.HasPrefix(src, "arn:aws:sqs:"):
			// Lambda refuses the mapping (CreateEventSourceMapping's
			// InvalidParameterValueException): a batch could still run when
			// its messages become visible again.
			if vt := visibilityTimeout(t, v, src); f.Timeout > vt {
				return top, fmt.Errorf("mapping %s: Queue visibility timeout: %d seconds is less than Function timeout: %d seconds (function %s)",
					id, int(vt/time.Second), int(f.Timeout/time.Second), f.Name)
			}
			conc := 2
			if sc, ok := p["ScalingConfig"].(map[string]any); ok {
				conc = intOf(sc["MaximumConcurrency"], 2)
			}
			// Lambda starts with five pollers; on this machine fewer do.
			top.SQS = append(top.SQS, esm.SQSMapping{Function: f.Name, QueueARN: src, QueueURL: queueURLs[src], Region: region,
				BatchSize: batch, Window: window, ReportFailures: report, Concurrency: min(conc, 3)})
		case strings.Contains(src, ":table/") && strings.Contains(src, "/stream/"):
			m := esm.StreamMapping{Function: f.Name, StreamARN: src, Region: region, BatchSize: batch, Window: window,
				ReportFailures: report, MaxRetries: intOf(p["MaximumRetryAttempts"], -1),
				MaxRecordAge: time.Duration(intOf(p["MaximumRecordAgeInSeconds"], -1)) * time.Second}
			m.StartingPosition, _ = p["StartingPosition"].(string)
			m.Bisect, _ = p["BisectBatchOnFunctionError"].(bool)
			if m.MaxRecordAge < 0 {
				m.MaxRecordAge = 0
			}
			if fc, ok := p["FilterCriteria"].(map[string]any); ok {
				filters, _ := fc["Filters"].([]any)
				for _, x := range filters {
					pat, _ := x.(map[string]any)["Pattern"].(string)
					pp, err := esm.ParsePattern(pat)
					if err != nil {
						return top, fmt.Errorf("mapping %s: %w", id, err)
					}
					m.Filters = append(m.Filters, pp)
				}
			}
			if dc, ok := p["DestinationConfig"].(map[string]any); ok {
				if of, ok := dc["OnFailure"].(map[string]any); ok {
					dest, err := v.String(of["Destination"])
					if err != nil {
						return top, fmt.Errorf("mapping %s destination: %w", id, err)
					}
					m.OnFailureQueue = queueURLs[dest]
				}
			}
			top.Streams = append(top.Streams, m)
		default:
			return top, fmt.Errorf("mapping %s: the runner does not run sources like %s", id, src)
		}
	}
	for _, id := range t.OfType("AWS::Events::Rule") {
		p := t.Resources[id].Properties
		expr, _ := p["ScheduleExpression"].(string)
		if expr == "" || p["State"] == "DISABLED" {
			continue
		}
		every, err := esm.ParseRate(expr)
		if err != nil {
			return top, fmt.Errorf("rule %s: %w", id, err)
		}
		s := esm.Schedule{RuleARN: "arn:aws:events:" + region + ":" + v.Refs["AWS::AccountId"] + ":rule/" + id, Every: every,
			Account: v.Refs["AWS::AccountId"], Region: region}
		targets, _ := p["Targets"].([]any)
		for _, x := range targets {
			tg, _ := x.(map[string]any)
			f, ok := fns[getAttOf(tg["Arn"])]
			if !ok {
				return top, fmt.Errorf("rule %s: a target that is not a function of the template", id)
			}
			input, _ := tg["Input"].(string)
			s.Targets = append(s.Targets, esm.Target{Function: f.Name, Input: input})
		}
		top.Schedules = append(top.Schedules, s)
	}
	return top, nil
}

// visibilityTimeout is the VisibilityTimeout of the template's queue of
// an ARN (SQS's default, 30 s, when it sets none).
func visibilityTimeout(t cfn.Template, v *cfn.Values, arn string) time.Duration {
	for _, id := range t.OfType("AWS::SQS::Queue") {
		if v.Attrs[id]["Arn"] == arn {
			return time.Duration(intOf(t.Resources[id].Properties["VisibilityTimeout"], 30)) * time.Second
		}
	}
	return 30 * time.Second
}

func refOf(x any) string {
	m, _ := x.(map[string]any)
	s, _ := m["Ref"].(string)
	return s
}

func getAttOf(x any) string {
	m, _ := x.(map[string]any)
	if ga, ok := m["Fn::GetAtt"].([]any); ok && len(ga) == 2 {
		s, _ := ga[0].(string)
		return s
	}
	return ""
}

func intOf(x any, def int) int {
	if f, ok := x.(float64); ok {
		return int(f)
	}
	return def
}
