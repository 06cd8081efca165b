package studioapi

import (
	"net/http"
	"strconv"
	"time"

	"github.com/voiceops/opsapi/shared/platform/httpapi"
	"github.com/voiceops/opsapi/shared/platform/jsontext"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// A rule's body and the active alerts' list, written by hand byte for byte
// as WriteJSON encodes ruleJSON and activeAlertJSON (rulebody_test.go holds
// them equal): a create or a read of a rule spent a fifth of its time
// copying the rule by reflection and encoding it through encoding/json's.

// writeRule answers a rule's body.
func writeRule(w http.ResponseWriter, status int, r voiceops.AlertRule) {
	httpapi.WriteAppended(w, status, func(b []byte) []byte { return appendRule(b, r) })
}

// writeRules answers the list of the rules that match (listJSON of
// ruleJSON).
func writeRules(w http.ResponseWriter, rules []voiceops.AlertRule, match func(voiceops.AlertRule) bool) {
	writeList(w, rules, match, appendRule)
}

// writeActiveAlerts answers GET /v1/alerts: the rules that match among
// those enabled and in alert (listJSON of activeAlertJSON).
func writeActiveAlerts(w http.ResponseWriter, rules []voiceops.AlertRule, match func(voiceops.AlertRule) bool) {
	active := func(r voiceops.AlertRule) bool { return r.Enabled && r.State == voiceops.StateAlert && match(r) }
	writeList(w, rules, active, appendActiveAlert)
}

// writeList answers {"data":[...]} with item's object of each rule kept.
func writeList(w http.ResponseWriter, rules []voiceops.AlertRule, keep func(voiceops.AlertRule) bool, item func([]byte, voiceops.AlertRule) []byte) {
	httpapi.WriteAppended(w, http.StatusOK, func(b []byte) []byte {
		b = append(b, `{"data":[`...)
		n := 0
		for _, r := range rules {
			if !keep(r) {
				continue
			}
			if n > 0 {
				b = append(b, ',')
			}
			b = item(b, r)
			n++
		}
		return append(b, "]}"...)
	})
}

// appendRule appends the rule's JSON object (ruleJSON's fields in order).
func appendRule(b []byte, r voiceops.AlertRule) []byte {
	b = append(b, `{"id":`...)
	b = jsontext.AppendString(b, r.ID)
	b = append(b, `,"name":`...)
	b = jsontext.AppendString(b, r.Name)
	b = append(b, `,"project_id":`...)
	b = appendOptionalString(b, r.ProjectID)
	b = appendCondition(b, r)
	b = append(b, `,"enabled":`...)
	b = strconv.AppendBool(b, r.Enabled)
	b = append(b, `,"current_state":`...)
	b = jsontext.AppendString(b, string(r.State))
	b = append(b, `,"created_at":`...)
	b = appendTime(b, &r.CreatedAt)
	b = append(b, `,"updated_at":`...)
	b = appendTime(b, &r.UpdatedAt)
	b = append(b, `,"since":`...)
	b = appendTime(b, r.Since)
	b = append(b, `,"last_evaluated_at":`...)
	b = appendTime(b, r.LastEvaluatedAt)
	b = append(b, `,"current_value":`...)
	b = appendOptionalInt(b, r.CurrentValue)
	return append(b, '}')
}

// appendActiveAlert appends the rule's item of GET /v1/alerts
// (activeAlertJSON's fields in order).
func appendActiveAlert(b []byte, r voiceops.AlertRule) []byte {
	b = append(b, `{"alert_rule_id":`...)
	b = jsontext.AppendString(b, r.ID)
	b = append(b, `,"name":`...)
	b = jsontext.AppendString(b, r.Name)
	b = appendCondition(b, r)
	b = append(b, `,"since":`...)
	b = appendTime(b, r.Since)
	b = append(b, `,"project_id":`...)
	b = appendOptionalString(b, r.ProjectID)
	b = append(b, `,"last_evaluated_at":`...)
	b = appendTime(b, r.LastEvaluatedAt)
	b = append(b, `,"current_value":`...)
	b = appendOptionalInt(b, r.CurrentValue)
	return append(b, '}')
}

// appendCondition appends the fields both records write of the rule's
// condition, in their order: metric, operator, threshold_value and
// window_duration.
func appendCondition(b []byte, r voiceops.AlertRule) []byte {
	b = append(b, `,"metric":`...)
	b = jsontext.AppendString(b, string(r.Metric))
	b = append(b, `,"operator":`...)
	b = jsontext.AppendString(b, string(r.Operator))
	b = append(b, `,"threshold_value":`...)
	b = strconv.AppendInt(b, r.Threshold, 10)
	b = append(b, `,"window_duration":`...)
	return jsontext.AppendString(b, string(r.Window))
}

func appendOptionalString(b []byte, s *string) []byte {
	if s == nil {
		return append(b, "null"...)
	}
	return jsontext.AppendString(b, *s)
}

func appendOptionalInt(b []byte, n *int64) []byte {
	if n == nil {
		return append(b, "null"...)
	}
	return strconv.AppendInt(b, *n, 10)
}

// appendTime appends a time as httpapi.Time writes it (the format needs
// no escaping), or null.
func appendTime(b []byte, t *time.Time) []byte {
	if t == nil {
		return append(b, "null"...)
	}
	return append(httpapi.AppendTime(append(b, '"'), *t), '"')
}
