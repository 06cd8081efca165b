package vendorformat

import (
	"strings"
	"testing"
)

// The examples of the vendors' own documentation pass; each broken copy
// fails, so a generated payload that passes is one the vendor accepts.

// From https://api.slack.com/messaging/webhooks and the header and section
// examples of https://api.slack.com/reference/block-kit/blocks.
const slackDocExample = `{"text":"Danny Torrence left a 1 star review for your property.","blocks":[
{"type":"header","text":{"type":"plain_text","text":"New request","emoji":true}},
{"type":"section","text":{"type":"mrkdwn","text":"Danny Torrence left the following review for your property:"}},
{"type":"section","fields":[{"type":"mrkdwn","text":"*Type:*\nPaid Time Off"},{"type":"mrkdwn","text":"*Created by:*\n<example.com|Fred Enriquez>"}]},
{"type":"divider"},
{"type":"context","elements":[{"type":"mrkdwn","text":"Last updated Jan 1"}]}]}`

// From https://developer.pagerduty.com/docs/events-api-v2/trigger-events/.
const pagerDutyDocTrigger = `{"payload":{"summary":"DISK at 99% on machine prod-datapipe03.example.com","timestamp":"2015-07-17T08:42:58.315+0000",
"severity":"critical","source":"prod-datapipe03.example.com","component":"mysql","group":"prod-datapipe","class":"disk",
"custom_details":{"free space":"1%","ping time":"1500ms","load avg":0.75}},
"routing_key":"e93facc04764012d7bfb002500d5d1a6","dedup_key":"srv01/mysql","event_action":"trigger",
"client":"Sample Monitoring Service","client_url":"https://monitoring.service.com",
"links":[{"href":"http://pagerduty.example.com","text":"An example link."}],
"images":[{"src":"https://chart.googleapis.com/chart?chs=600x400","href":"https://example.com/","alt":"An example link with an image"}]}`

// From https://developer.pagerduty.com/docs/events-api-v2/resolve-events/.
const pagerDutyDocResolve = `{"routing_key":"e93facc04764012d7bfb002500d5d1a6","event_action":"resolve","dedup_key":"srv01/mysql"}`

func TestSlack(t *testing.T) {
	if err := ValidateSlack([]byte(slackDocExample)); err != nil {
		t.Fatalf("the documentation's example: %v", err)
	}
	for name, bad := range map[string]string{
		"unknown top-level field": strings.Replace(slackDocExample, `"text":"Danny`, `"txt":"Danny`, 1),
		"unknown block type":      strings.Replace(slackDocExample, `"type":"divider"`, `"type":"dividr"`, 1),
		"mrkdwn header":           strings.Replace(slackDocExample, `"type":"plain_text","text":"New request"`, `"type":"mrkdwn","text":"New request"`, 1),
		"header over 150":         strings.Replace(slackDocExample, `New request`, strings.Repeat("n", 151), 1),
		"empty text":              strings.Replace(slackDocExample, `Last updated Jan 1`, ``, 1),
		"emoji on mrkdwn":         strings.Replace(slackDocExample, `"type":"mrkdwn","text":"Danny Torrence left the`, `"type":"mrkdwn","emoji":true,"text":"Danny Torrence left the`, 1),
		"empty message":           `{"text":"","blocks":[]}`,
		"trailing data":           `{"text":"x"} {}`,
	} {
		if err := ValidateSlack([]byte(bad)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestPagerDuty(t *testing.T) {
	for _, ok := range []string{pagerDutyDocTrigger, pagerDutyDocResolve} {
		if _, err := ValidatePagerDuty([]byte(ok)); err != nil {
			t.Fatalf("the documentation's example: %v", err)
		}
	}
	for name, bad := range map[string]string{
		"short routing key":       strings.Replace(pagerDutyDocResolve, "e93facc04764012d7bfb002500d5d1a6", "e93facc0", 1),
		"unknown action":          strings.Replace(pagerDutyDocResolve, `"resolve"`, `"close"`, 1),
		"resolve without key":     strings.Replace(pagerDutyDocResolve, `,"dedup_key":"srv01/mysql"`, ``, 1),
		"trigger without payload": `{"routing_key":"e93facc04764012d7bfb002500d5d1a6","event_action":"trigger"}`,
		"unknown severity":        strings.Replace(pagerDutyDocTrigger, `"critical"`, `"high"`, 1),
		"no source":               strings.Replace(pagerDutyDocTrigger, `"source":"prod-datapipe03.example.com",`, ``, 1),
		"bad timestamp":           strings.Replace(pagerDutyDocTrigger, `2015-07-17T08:42:58.315+0000`, `yesterday`, 1),
		"unknown field":           strings.Replace(pagerDutyDocTrigger, `"client":`, `"source_url":"x","client":`, 1),
		"summary over 1024":       strings.Replace(pagerDutyDocTrigger, `DISK at 99%`, strings.Repeat("d", 1025), 1),
	} {
		if _, err := ValidatePagerDuty([]byte(bad)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
