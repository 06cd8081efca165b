package emf

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf8"
)

// Units are the units the specification allows.
var Units = map[string]bool{
	"Seconds": true, "Microseconds": true, "Milliseconds": true, "Bytes": true, "Kilobytes": true,
	"Megabytes": true, "Gigabytes": true, "Terabytes": true, "Bits": true, "Kilobits": true,
	"Megabits": true, "Gigabits": true, "Terabits": true, "Percent": true, "Count": true,
	"Bytes/Second": true, "Kilobytes/Second": true, "Megabytes/Second": true, "Gigabytes/Second": true,
	"Terabytes/Second": true, "Bits/Second": true, "Kilobits/Second": true, "Megabits/Second": true,
	"Gigabits/Second": true, "Terabits/Second": true, "Count/Second": true, "None": true,
}

// Validate checks one line against the Embedded Metric Format's rules
// (the package comment lists them). Tests run it over every line a
// handler run wrote.
func Validate(line []byte) error {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(line, &doc); err != nil {
		return fmt.Errorf("not a JSON object: %w", err)
	}
	rawAWS, ok := doc["_aws"]
	if !ok {
		return fmt.Errorf("no _aws member")
	}
	var meta struct {
		Timestamp         *json.Number `json:"Timestamp"`
		CloudWatchMetrics *[]struct {
			Namespace  *string     `json:"Namespace"`
			Dimensions *[][]string `json:"Dimensions"`
			Metrics    *[]struct {
				Name              *string `json:"Name"`
				Unit              *string `json:"Unit"`
				StorageResolution *int    `json:"StorageResolution"`
			} `json:"Metrics"`
		} `json:"CloudWatchMetrics"`
	}
	dec := json.NewDecoder(bytes.NewReader(rawAWS))
	dec.UseNumber()
	if err := dec.Decode(&meta); err != nil {
		return fmt.Errorf("_aws: %w", err)
	}
	if meta.Timestamp == nil {
		return fmt.Errorf("_aws.Timestamp is missing")
	}
	if ms, err := meta.Timestamp.Int64(); err != nil || ms <= 0 {
		return fmt.Errorf("_aws.Timestamp %s is not epoch milliseconds", *meta.Timestamp)
	}
	if meta.CloudWatchMetrics == nil {
		return fmt.Errorf("_aws.CloudWatchMetrics is missing")
	}
	for i, d := range *meta.CloudWatchMetrics {
		if d.Namespace == nil || *d.Namespace == "" || utf8.RuneCountInString(*d.Namespace) > 255 {
			return fmt.Errorf("directive %d: Namespace must be 1 to 255 characters", i)
		}
		if d.Dimensions == nil {
			return fmt.Errorf("directive %d: Dimensions is missing", i)
		}
		for _, set := range *d.Dimensions {
			if len(set) > MaxDimensions {
				return fmt.Errorf("directive %d: a dimension set has %d names, at most %d", i, len(set), MaxDimensions)
			}
			for _, name := range set {
				var v string
				raw, ok := doc[name]
				if !ok || json.Unmarshal(raw, &v) != nil {
					return fmt.Errorf("directive %d: dimension %q is not a string member of the root", i, name)
				}
				if v == "" || utf8.RuneCountInString(v) > 1024 {
					return fmt.Errorf("directive %d: dimension %q value must be 1 to 1024 characters", i, name)
				}
			}
		}
		if d.Metrics == nil {
			return fmt.Errorf("directive %d: Metrics is missing", i)
		}
		if len(*d.Metrics) > MaxMetrics {
			return fmt.Errorf("directive %d: %d metrics, at most %d", i, len(*d.Metrics), MaxMetrics)
		}
		for _, m := range *d.Metrics {
			if m.Name == nil || *m.Name == "" || utf8.RuneCountInString(*m.Name) > 1024 {
				return fmt.Errorf("directive %d: a metric Name must be 1 to 1024 characters", i)
			}
			if m.Unit != nil && !Units[*m.Unit] {
				return fmt.Errorf("directive %d: metric %s: unit %q is not one of CloudWatch's", i, *m.Name, *m.Unit)
			}
			if m.StorageResolution != nil && *m.StorageResolution != 1 && *m.StorageResolution != 60 {
				return fmt.Errorf("directive %d: metric %s: StorageResolution must be 1 or 60", i, *m.Name)
			}
			raw, ok := doc[*m.Name]
			if !ok {
				return fmt.Errorf("directive %d: metric %s has no member in the root", i, *m.Name)
			}
			var one float64
			var many []float64
			switch {
			case json.Unmarshal(raw, &one) == nil:
			case json.Unmarshal(raw, &many) == nil:
				if len(many) == 0 || len(many) > MaxValues {
					return fmt.Errorf("directive %d: metric %s has %d values, 1 to %d allowed", i, *m.Name, len(many), MaxValues)
				}
			default:
				return fmt.Errorf("directive %d: metric %s is not a number or an array of numbers", i, *m.Name)
			}
		}
	}
	return nil
}
