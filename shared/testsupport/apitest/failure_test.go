package apitest

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/voiceops/opsapi/shared/voiceops"
)

// failingRules fails every rule call with an error carrying internal text.
type failingRules struct{ voiceops.RuleStore }

var errDynamo = errors.New("ProvisionedThroughputExceededException: table voiceops-us-config")

func (failingRules) CreateRule(context.Context, voiceops.AlertRule) error { return errDynamo }
func (failingRules) ListRules(context.Context, string) ([]voiceops.AlertRule, error) {
	return nil, errDynamo
}
func (failingRules) GetRule(context.Context, string, string) (voiceops.AlertRule, error) {
	return voiceops.AlertRule{}, errDynamo
}

func TestStoreErrorsAre500WithoutInternalText(t *testing.T) {
	h := newHarnessWith(t, func(s voiceops.Stores) voiceops.Stores {
		s.Rules = failingRules{s.Rules}
		return s
	})
	for _, c := range []struct{ method, path string }{
		{"POST", "/v1/alert-rules"}, {"GET", "/v1/alert-rules"}, {"GET", "/v1/alert-rules/ar_x1"}, {"GET", "/v1/alerts"},
	} {
		var body any
		if c.method == "POST" {
			body = validRule()
		}
		res := h.do(c.method, c.path, h.keyA, body).Expect(t, 500)
		m := res.JSON(t)
		if m["message"] != "internal error" || m["request_id"] != res.Header.Get("X-Request-Id") || m["request_id"] == "" {
			t.Errorf("%s %s: body %s", c.method, c.path, res.Body)
		}
		if strings.Contains(string(res.Body), "Provisioned") || strings.Contains(string(res.Body), "voiceops-us") {
			t.Errorf("internal text leaked: %s", res.Body)
		}
	}
}
