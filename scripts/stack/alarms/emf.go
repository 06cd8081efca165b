package alarms

import (
	"encoding/json"
	"strings"
)

// Datum is one metric's values from a log line.
type Datum struct {
	Metric Metric
	Values []float64
}

// ParseEMF reads a CloudWatch Embedded Metric Format line: for each
// directive, each metric's value (a number or an array of numbers) under
// each of its dimension sets, as CloudWatch Logs extracts them. A line
// that is not EMF (any other log line) yields nothing.
func ParseEMF(line []byte) []Datum {
	if !strings.Contains(string(line), `"_aws"`) {
		return nil
	}
	var root map[string]json.RawMessage
	if json.Unmarshal(line, &root) != nil {
		return nil
	}
	var meta struct {
		CloudWatchMetrics []struct {
			Namespace  string
			Dimensions [][]string
			Metrics    []struct{ Name string }
		}
	}
	if json.Unmarshal(root["_aws"], &meta) != nil {
		return nil
	}
	str := func(k string) (string, bool) {
		var s string
		err := json.Unmarshal(root[k], &s)
		return s, err == nil
	}
	var out []Datum
	for _, d := range meta.CloudWatchMetrics {
		sets := d.Dimensions
		if len(sets) == 0 {
			sets = [][]string{{}}
		}
		for _, m := range d.Metrics {
			var vs []float64
			raw := root[m.Name]
			var one float64
			if json.Unmarshal(raw, &one) == nil {
				vs = []float64{one}
			} else if json.Unmarshal(raw, &vs) != nil {
				continue
			}
		sets:
			for _, set := range sets {
				dims := map[string]string{}
				for _, name := range set {
					v, ok := str(name)
					if !ok {
						continue sets // CloudWatch skips a set whose member is missing
					}
					dims[name] = v
				}
				out = append(out, Datum{Metric: NewMetric(d.Namespace, m.Name, dims), Values: vs})
			}
		}
	}
	return out
}
