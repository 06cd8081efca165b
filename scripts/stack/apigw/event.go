package apigw

import (
	"encoding/base64"
	"encoding/json"
	"mime"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"
)

// EventContext is what API Gateway knows of a request beyond the request
// itself.
type EventContext struct {
	AccountID  string
	APIID      string
	DomainName string
	Stage      string
	// StageVariables are the stage's (the event's stageVariables).
	StageVariables map[string]string
	RequestID      string
	Now            time.Time
}

// BuildEvent builds the payload format 2.0 event of a request as API
// Gateway does: header names lowercased, repeated headers joined with
// commas, the Cookie header moved to cookies, query parameters joined with
// commas, and a body that is not UTF-8 text base64-encoded.
func BuildEvent(r *http.Request, body []byte, m Match, ec EventContext) events.APIGatewayV2HTTPRequest {
	headers := map[string]string{}
	var cookies []string
	for k, vs := range r.Header {
		name := strings.ToLower(k)
		if name == "cookie" {
			for _, v := range vs {
				for _, c := range strings.Split(v, ";") {
					if c = strings.TrimSpace(c); c != "" {
						cookies = append(cookies, c)
					}
				}
			}
			continue
		}
		headers[name] = strings.Join(vs, ",")
	}
	host := r.Host
	if host == "" {
		host = ec.DomainName
	}
	headers["host"] = host
	headers["content-length"] = strconv.Itoa(len(body))
	headers["x-forwarded-proto"] = "https"
	ip := sourceIP(r)
	headers["x-forwarded-for"] = ip
	var qsp map[string]string
	if q := r.URL.Query(); len(q) > 0 {
		qsp = map[string]string{}
		keys := make([]string, 0, len(q))
		for k := range q {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			qsp[k] = strings.Join(q[k], ",")
		}
	}
	ev := events.APIGatewayV2HTTPRequest{
		Version:               "2.0",
		RouteKey:              m.Key,
		RawPath:               r.URL.EscapedPath(),
		RawQueryString:        r.URL.RawQuery,
		Cookies:               cookies,
		Headers:               headers,
		QueryStringParameters: qsp,
		PathParameters:        m.PathParameters,
		StageVariables:        ec.StageVariables,
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			RouteKey:     m.Key,
			AccountID:    ec.AccountID,
			Stage:        ec.Stage,
			RequestID:    ec.RequestID,
			APIID:        ec.APIID,
			DomainName:   host,
			DomainPrefix: strings.Split(host, ".")[0],
			Time:         ec.Now.UTC().Format("02/Jan/2006:15:04:05 -0700"),
			TimeEpoch:    ec.Now.UnixMilli(),
			HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{
				Method:    r.Method,
				Path:      r.URL.Path,
				Protocol:  r.Proto,
				SourceIP:  ip,
				UserAgent: r.UserAgent(),
			},
		},
	}
	if len(body) > 0 {
		if isText(r.Header.Get("Content-Type"), body) {
			ev.Body = string(body)
		} else {
			ev.Body = base64.StdEncoding.EncodeToString(body)
			ev.IsBase64Encoded = true
		}
	}
	return ev
}

func sourceIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// isText tells whether API Gateway passes a body as text: a textual media
// type (or none) and valid UTF-8.
func isText(contentType string, body []byte) bool {
	if !utf8.Valid(body) {
		return false
	}
	if contentType == "" {
		return true
	}
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return false
	}
	return strings.HasPrefix(mt, "text/") || strings.HasSuffix(mt, "json") || strings.HasSuffix(mt, "xml") ||
		mt == "application/x-www-form-urlencoded" || mt == "application/javascript"
}

// Response is what API Gateway answers for a function's result.
type Response struct {
	Status  int
	Headers http.Header
	Body    []byte
}

// DecodeResponse turns a function's output into the HTTP answer as API
// Gateway does for payload format 2.0: an object with statusCode is a
// full response; any other valid JSON is a 200 application/json body. A
// function error or unparsable output is API Gateway's 500.
func DecodeResponse(out []byte, functionError bool) Response {
	if functionError {
		return Gateway(http.StatusInternalServerError, "Internal Server Error")
	}
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(out, &probe); err == nil {
		if _, ok := probe["statusCode"]; ok {
			var r events.APIGatewayV2HTTPResponse
			if err := json.Unmarshal(out, &r); err != nil || r.StatusCode < 100 || r.StatusCode > 599 {
				return Gateway(http.StatusInternalServerError, "Internal Server Error")
			}
			h := http.Header{}
			for k, v := range r.Headers {
				h.Set(k, v)
			}
			for k, vs := range r.MultiValueHeaders {
				for _, v := range vs {
					h.Add(k, v)
				}
			}
			for _, c := range r.Cookies {
				h.Add("Set-Cookie", c)
			}
			body := []byte(r.Body)
			if r.IsBase64Encoded {
				b, err := base64.StdEncoding.DecodeString(r.Body)
				if err != nil {
					return Gateway(http.StatusInternalServerError, "Internal Server Error")
				}
				body = b
			}
			return Response{Status: r.StatusCode, Headers: h, Body: body}
		}
	}
	if !json.Valid(out) {
		return Gateway(http.StatusInternalServerError, "Internal Server Error")
	}
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	return Response{Status: http.StatusOK, Headers: h, Body: out}
}

// Gateway is one of API Gateway's own answers, {"message": ...}.
func Gateway(status int, message string) Response {
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	b, _ := json.Marshal(map[string]string{"message": message})
	return Response{Status: status, Headers: h, Body: b}
}
