package apitest

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/voiceops/opsapi/shared/voiceops"
)

// GET /v1/account: the key's account and its projects, another account's
// never; a project-scoped key is refused like on every studio route.
func TestAccountNamesTheKeysAccountAndProjects(t *testing.T) {
	h := newHarness(t)
	a := h.do("GET", "/v1/account", h.keyA, nil).Expect(t, 200).JSON(t)
	if a["account_id"] != "acct_a" {
		t.Errorf("account %v", a)
	}
	var ids []string
	for _, p := range a["projects"].([]any) {
		pr := p.(map[string]any)
		ids = append(ids, pr["id"].(string))
		if pr["name"] != pr["id"] || pr["created_at"] == "" { // the fixture names each project by its ID
			t.Errorf("project %v", pr)
		}
	}
	if strings.Join(ids, ",") != "proj_a1,proj_a2" {
		t.Errorf("acct_a's projects %v, want proj_a1,proj_a2", ids)
	}
	b := h.do("GET", "/v1/account", h.keyB, nil).Expect(t, 200).JSON(t)
	if b["account_id"] != "acct_b" || len(b["projects"].([]any)) != 1 || b["projects"].([]any)[0].(map[string]any)["id"] != "proj_b1" {
		t.Errorf("acct_b %v", b)
	}
	h.do("GET", "/v1/account", h.projKey, nil).Expect(t, 403)
	h.do("GET", "/v1/account", "", nil).Expect(t, 401)
}

// GET .../deliveries/{id}/payload: the body every attempt posts, rendered
// for the endpoint's kind, bounded, and only for the endpoint's own
// deliveries.
func TestDeliveryPayloadIsWhatTheAttemptsPost(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	ep := h.do("POST", "/v1/webhook-endpoints", h.keyA, validEndpoint()).Expect(t, 201).JSON(t)["id"].(string)
	sent := h.do("POST", "/v1/webhook-endpoints/"+ep+"/test", h.keyA, nil).Expect(t, 202).JSON(t)
	dlv, evt := sent["delivery_id"].(string), sent["event_id"].(string)
	path := "/v1/webhook-endpoints/" + ep + "/deliveries/" + dlv + "/payload"
	p := h.do("GET", path, h.keyA, nil).Expect(t, 200).JSON(t)
	e, err := h.stores.Events.GetEvent(ctx, "acct_a", evt)
	if err != nil {
		t.Fatal(err)
	}
	if p["delivery_id"] != dlv || p["event_id"] != evt || p["content_type"] != "application/json" || p["truncated"] != false || p["body"] != string(e.Body) {
		t.Errorf("payload %v, want the event's body %s", p, e.Body)
	}

	// A Slack endpoint's delivery shows the Slack message, not the event.
	slack := h.do("POST", "/v1/webhook-endpoints", h.keyA, slackEndpoint()).Expect(t, 201).JSON(t)["id"].(string)
	sd := h.do("POST", "/v1/webhook-endpoints/"+slack+"/test", h.keyA, nil).Expect(t, 202).JSON(t)["delivery_id"].(string)
	sp := h.do("GET", "/v1/webhook-endpoints/"+slack+"/deliveries/"+sd+"/payload", h.keyA, nil).Expect(t, 200).JSON(t)
	var msg map[string]any
	if err := json.Unmarshal([]byte(sp["body"].(string)), &msg); err != nil || msg["blocks"] == nil {
		t.Errorf("slack payload %v (%v), want a Block Kit message", sp["body"], err)
	}

	// A body beyond the bound is cut on a character boundary.
	big := voiceops.AlertEvent{ID: "evt_big", AccountID: "acct_a", Type: voiceops.EventTriggered, CreatedAt: h.clock.Now(),
		Body: []byte(`{"x":"` + strings.Repeat("é", 10000) + `"}`), EndpointID: ep}
	if err := h.stores.Events.PutEvent(ctx, big); err != nil {
		t.Fatal(err)
	}
	if err := h.stores.Deliveries.CreateDeliveries(ctx, []voiceops.Delivery{{ID: "dlv_big", AccountID: "acct_a", EndpointID: ep, EventID: "evt_big",
		EventType: voiceops.EventTriggered, Status: voiceops.DeliveryPending, CreatedAt: h.clock.Now(), UpdatedAt: h.clock.Now()}}); err != nil {
		t.Fatal(err)
	}
	bp := h.do("GET", "/v1/webhook-endpoints/"+ep+"/deliveries/dlv_big/payload", h.keyA, nil).Expect(t, 200).JSON(t)
	if body := bp["body"].(string); bp["truncated"] != true || len(body) > 16384 || len(body) < 16380 || !strings.HasPrefix(body, `{"x":"éé`) {
		t.Errorf("big payload: truncated %v, %d bytes", bp["truncated"], len(body))
	}

	// Errors: another account's, another endpoint's, malformed IDs.
	other := h.do("POST", "/v1/webhook-endpoints", h.keyA, validEndpoint()).Expect(t, 201).JSON(t)["id"].(string)
	h.do("GET", path, h.keyB, nil).Expect(t, 404)
	h.do("GET", "/v1/webhook-endpoints/"+other+"/deliveries/"+dlv+"/payload", h.keyA, nil).Expect(t, 404)
	h.do("GET", "/v1/webhook-endpoints/"+ep+"/deliveries/dlv_nope/payload", h.keyA, nil).Expect(t, 404)
	h.do("GET", "/v1/webhook-endpoints/"+ep+"/deliveries/nope/payload", h.keyA, nil).Expect(t, 422)
	h.do("GET", "/v1/webhook-endpoints/x/deliveries/"+dlv+"/payload", h.keyA, nil).Expect(t, 422)
}
