package eventsapi

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"math"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/voiceops/opsapi/shared/conversations/conversation"
	"github.com/voiceops/opsapi/shared/conversations/turnreply"
	"github.com/voiceops/opsapi/shared/platform/httpapi"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// Events is the events group (the base host; functions/events): the external
// events webhook and the bridge-ended notification, both authenticated
// with a project's events key in X-Api-Key.
type Events struct {
	Engine Engine
}

// Routes lists the events group's routes.
func (g *Events) Routes() []httpapi.Route {
	return []httpapi.Route{
		httpapi.BaseRoute("POST", "/v1/external-events/webhook", httpapi.EventsKey, g.externalEvent).Creates(),
		httpapi.BaseRoute("POST", "/internal/v1/agentic-dial/bridge-ended", httpapi.EventsKey, g.bridgeEnded),
	}
}

// MaxEventBodyBytes is the limit of an external event's body.
const MaxEventBodyBytes = 256 << 10

// maxEventIDLength bounds an external event ID.
const maxEventIDLength = 128

var (
	errOtherAccount    = voiceops.Errorf(voiceops.KindForbidden, "the API key is not valid for this account")
	errOtherProject    = voiceops.Errorf(voiceops.KindForbidden, "the API key is not valid for this project")
	errEventTooLarge   = &voiceops.Error{Kind: voiceops.KindTooLarge, Message: "request body is larger than " + strconv.Itoa(MaxEventBodyBytes) + " bytes"}
	errEventMediaType  = voiceops.Errorf(voiceops.KindBadRequest, "Content-Type must be one of: application/json, application/x-www-form-urlencoded, application/xml, text/plain")
	eventLocations     = []string{"headers", "querystring", "payload"}
	eventContentTypes  = []string{"application/json", "application/x-www-form-urlencoded", "application/xml", "text/plain"}
	errEventIDNotFound = func(where string) error {
		return voiceops.Errorf(voiceops.KindBadRequest, "event ID not found: %s", where)
	}
)

type eventQueuedJSON struct {
	Status  string `json:"status"`
	EventID string `json:"event_id"`
}

// externalEvent is POST /v1/external-events/webhook: the event ID is read
// from the configured location, must name a conversation in progress of
// the key's project (conversation.Engine.ExternalEvent), and the opaque body
// is stored with it.
func (g *Events) externalEvent(w http.ResponseWriter, r *http.Request, p httpapi.Caller) error {
	q := r.URL.Query()
	var fields []voiceops.FieldError
	param := func(name string) string {
		vs, ok := q[name]
		switch {
		case !ok || len(vs) == 0 || vs[0] == "":
			fields = append(fields, voiceops.FieldError{Field: name, Message: "is required"})
		case len(vs) > 1:
			fields = append(fields, voiceops.FieldError{Field: name, Message: "must be given once"})
		default:
			return vs[0]
		}
		return ""
	}
	location, path := param("event_id_location"), param("event_id_path")
	accountID, projectID := param("account_id"), param("project_id")
	if location != "" && !slices.Contains(eventLocations, location) {
		fields = append(fields, voiceops.FieldError{Field: "event_id_location", Message: "must be one of: headers, querystring, payload"})
	}
	if len(fields) > 0 {
		return &voiceops.Error{Kind: voiceops.KindBadRequest, Message: "invalid query", Fields: fields}
	}
	switch {
	case p.AccountID != accountID:
		return errOtherAccount
	case p.ProjectID != projectID:
		return errOtherProject
	}

	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxEventBodyBytes))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return errEventTooLarge
		}
		return voiceops.Errorf(voiceops.KindBadRequest, "could not read the request body")
	}
	mediaType := ""
	if ct := r.Header.Get("Content-Type"); ct != "" || len(body) > 0 {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || !slices.Contains(eventContentTypes, mt) {
			return errEventMediaType
		}
		mediaType = mt
	}
	// A JSON body passes the one check of every JSON request body (valid,
	// no repeated key), whatever it is read for: the project's function
	// reads it too.
	if mediaType == "application/json" && len(body) > 0 {
		if err := httpapi.CheckJSON(body); err != nil {
			return err
		}
	}

	var id string
	switch location {
	case "headers":
		id = r.Header.Get(path)
		if id == "" {
			return errEventIDNotFound("no header " + path)
		}
	case "querystring":
		id = q.Get(path)
		if id == "" {
			return errEventIDNotFound("no query parameter " + path)
		}
	case "payload":
		if id, err = payloadEventID(mediaType, body, path); err != nil {
			return err
		}
	}
	if len(id) > maxEventIDLength {
		return voiceops.Errorf(voiceops.KindBadRequest, "the event ID is longer than %d characters", maxEventIDLength)
	}
	if _, err := g.Engine.ExternalEvent(r.Context(), accountID, projectID, conversation.ExternalEvent{
		ID: id, ContentType: mediaType, Body: body,
	}); err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusCreated, eventQueuedJSON{Status: "queued", EventID: id})
	return nil
}

// payloadEventID reads the event ID at a dotted path of the body: object
// keys (and array indexes) of a JSON body, a field of a form body, or
// element names from the root of an XML body (the element's text). A
// text/plain body has no structure to read it from.
func payloadEventID(mediaType string, body []byte, path string) (string, error) {
	switch mediaType {
	case "application/json":
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			return "", voiceops.Errorf(voiceops.KindBadRequest, "the body is not valid JSON")
		}
		for _, seg := range strings.Split(path, ".") {
			switch node := v.(type) {
			case map[string]any:
				v = node[seg]
			case []any:
				i, err := strconv.Atoi(seg)
				if err != nil || i < 0 || i >= len(node) {
					return "", errEventIDNotFound("nothing at " + path + " in the JSON body")
				}
				v = node[i]
			default:
				return "", errEventIDNotFound("nothing at " + path + " in the JSON body")
			}
		}
		switch id := v.(type) {
		case string:
			if id != "" {
				return id, nil
			}
		case json.Number:
			return id.String(), nil
		case nil:
		default:
			return "", errEventIDNotFound("the value at " + path + " is not a string or a number")
		}
		return "", errEventIDNotFound("nothing at " + path + " in the JSON body")
	case "application/x-www-form-urlencoded":
		form, err := url.ParseQuery(string(body))
		if err != nil {
			return "", voiceops.Errorf(voiceops.KindBadRequest, "the body is not a valid form")
		}
		if id := form.Get(path); id != "" {
			return id, nil
		}
		return "", errEventIDNotFound("no field " + path + " in the form body")
	case "application/xml":
		return xmlEventID(body, path)
	case "text/plain":
		return "", voiceops.Errorf(voiceops.KindBadRequest, "event_id_location payload needs a JSON, form or XML body: a text/plain body has no path")
	}
	return "", errEventIDNotFound("the request has no body")
}

// xmlEventID returns the trimmed text of the first element whose names from
// the root are the dotted path (a.b.c is <a><b><c>ID</c></b></a>).
func xmlEventID(body []byte, path string) (string, error) {
	want := strings.Split(path, ".")
	dec := xml.NewDecoder(bytes.NewReader(body))
	var stack []string
	var text strings.Builder
	matching := false
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", voiceops.Errorf(voiceops.KindBadRequest, "the body is not valid XML")
		}
		switch t := tok.(type) {
		case xml.StartElement:
			stack = append(stack, t.Name.Local)
			if !matching && len(stack) == len(want) && slices.Equal(stack, want) {
				matching = true
				text.Reset()
			}
		case xml.CharData:
			if matching && len(stack) == len(want) {
				text.Write(t)
			}
		case xml.EndElement:
			if matching && len(stack) == len(want) {
				if id := strings.TrimSpace(text.String()); id != "" {
					return id, nil
				}
				matching = false
			}
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		}
	}
	return "", errEventIDNotFound("no element " + path + " in the XML body")
}

// bridgeEnded is POST /internal/v1/agentic-dial/bridge-ended: the
// conversation must be of the events key's project (else 404).
func (g *Events) bridgeEnded(w http.ResponseWriter, r *http.Request, p httpapi.Caller) error {
	o, err := httpapi.ReadObject(w, r, false)
	if err != nil {
		return err
	}
	id := turnreply.ConversationID(o)
	var b conversation.Bridge
	b.BridgeDurationSeconds = readSeconds(o, "bridge_duration_seconds")
	b.CallDurationSeconds = readSeconds(o, "call_duration_seconds")
	if err := o.Done(); err != nil {
		return err
	}
	if _, err := g.Engine.BridgeEnded(r.Context(), p.AccountID, p.ProjectID, id, b); err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, turnreply.OK)
	return nil
}

// seconds reads a required duration in seconds: a JSON number >= 0.
func readSeconds(o *httpapi.Object, name string) float64 {
	raw, ok := o.Take(name, true, false)
	if !ok {
		return 0
	}
	var v float64
	if c := raw[0]; (c != '-' && (c < '0' || c > '9')) || json.Unmarshal(raw, &v) != nil || math.IsInf(v, 0) || v < 0 {
		o.Fail(name, "must be a number of seconds, 0 or more")
		return 0
	}
	return v
}
