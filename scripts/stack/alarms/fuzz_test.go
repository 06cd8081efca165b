package alarms

import "testing"

// The runner reads every line the functions print: no line may panic the
// parser, and every datum it returns names a metric.
func FuzzParseEMF(f *testing.F) {
	f.Add([]byte(`{"_aws":{"CloudWatchMetrics":[{"Namespace":"VoiceOps","Dimensions":[["Host"]],"Metrics":[{"Name":"x"}]}]},"x":[1,2],"Host":"h"}`))
	f.Add([]byte(`{"_aws":{"CloudWatchMetrics":[{"Namespace":"VoiceOps","Dimensions":[["Host"]],"Metrics":[{"Name":"x"}]}]},"x":"1"}`))
	f.Add([]byte(`{"_aws":null}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		for _, d := range ParseEMF(line) {
			if d.Metric.Name == "" && d.Metric.Namespace == "" && len(d.Values) == 0 {
				t.Errorf("an empty datum from %q", line)
			}
		}
	})
}

// Expressions come from the template: none may panic the parser or the
// evaluation.
func FuzzExpr(f *testing.F) {
	f.Add("IF(FILL(n, 0) >= 20, 100 * FILL(e, 0) / n, 0)")
	f.Add("-(-(a))")
	f.Fuzz(func(t *testing.T, s string) {
		e, err := parseExpr(s)
		if err == nil {
			_ = e.eval(map[string]float64{"n": 1, "e": 2})
		}
	})
}
