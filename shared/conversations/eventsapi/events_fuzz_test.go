package eventsapi

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/voiceops/opsapi/shared/voiceops"
)

// FuzzPayloadEventID drives the external event ID extraction with any body
// and dotted path, for each media type: it never panics, refuses with a 400
// only, and an ID it finds is really at the path (the form's field, a JSON
// string or number, an XML element's trimmed text).
func FuzzPayloadEventID(f *testing.F) {
	seeds := []struct {
		mt         uint8
		body, path string
	}{
		{0, `{"event":{"id":"evt_1"}}`, "event.id"},
		{0, `{"items":[{"id":7}]}`, "items.0.id"},
		{0, `{"a":null}`, "a"},
		{0, `[1,2`, "0"},
		{1, "id=evt_2&x=1", "id"},
		{1, "%zz", "id"},
		{2, "<a><b><c> evt_3 </c></b></a>", "a.b.c"},
		{2, "<a><b>x</b><b>y</b></a>", "a.b"},
		{2, "<a><b>", "a.b"},
		{3, "plain", "x"},
	}
	for _, s := range seeds {
		f.Add(s.mt, []byte(s.body), s.path)
	}
	media := []string{"application/json", "application/x-www-form-urlencoded", "application/xml", "text/plain"}
	f.Fuzz(func(t *testing.T, mt uint8, body []byte, path string) {
		mediaType := media[int(mt)%len(media)]
		id, err := payloadEventID(mediaType, body, path)
		if err != nil {
			if k := voiceops.KindOf(err); k != voiceops.KindBadRequest {
				t.Fatalf("error of kind %v: %v", k, err)
			}
			return
		}
		if id == "" {
			t.Fatal("found an empty ID")
		}
		switch mediaType {
		case "application/x-www-form-urlencoded":
			form, _ := url.ParseQuery(string(body))
			if form.Get(path) != id {
				t.Fatalf("form ID %q, field %q holds %q", id, path, form.Get(path))
			}
		case "application/json":
			if !json.Valid(body) && utf8.Valid(body) {
				// Only the first JSON value is read; trailing data is ignored.
				return
			}
		case "application/xml":
			if strings.TrimSpace(id) != id {
				t.Fatalf("XML ID %q is not trimmed", id)
			}
		case "text/plain":
			t.Fatal("a text/plain body gave an ID")
		}
	})
}
