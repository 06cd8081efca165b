package apigw

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// CORS is an HTTP API's CorsConfiguration. As API Gateway does with one
// (docs: "Configuring CORS for an HTTP API"): it answers a preflight
// (OPTIONS with Origin and Access-Control-Request-Method) itself, whatever
// the routes, 204 with the configured headers; and on any other request
// with an Origin it drops the CORS headers the integration returned and
// adds its own. A request whose origin is not allowed gets no CORS header
// (the browser then refuses the response).
type CORS struct {
	AllowOrigins     []string // "*", "https://*", "http://*" or exact origins
	AllowHeaders     []string
	AllowMethods     []string
	ExposeHeaders    []string
	AllowCredentials bool
	MaxAge           int // seconds; 0 sends none
}

// ParseCORS reads a template's CorsConfiguration; nil for none.
func ParseCORS(v any) (*CORS, error) {
	if v == nil {
		return nil, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("CorsConfiguration: want an object, got %T", v)
	}
	c := &CORS{}
	lists := map[string]*[]string{"AllowOrigins": &c.AllowOrigins, "AllowHeaders": &c.AllowHeaders,
		"AllowMethods": &c.AllowMethods, "ExposeHeaders": &c.ExposeHeaders}
	for k, x := range m {
		switch k {
		case "AllowOrigins", "AllowHeaders", "AllowMethods", "ExposeHeaders":
			items, ok := x.([]any)
			if !ok {
				return nil, fmt.Errorf("CorsConfiguration.%s: want a list of strings", k)
			}
			for _, it := range items {
				s, ok := it.(string)
				if !ok {
					return nil, fmt.Errorf("CorsConfiguration.%s: want a list of strings", k)
				}
				*lists[k] = append(*lists[k], s)
			}
		case "AllowCredentials":
			if c.AllowCredentials, ok = x.(bool); !ok {
				return nil, fmt.Errorf("CorsConfiguration.AllowCredentials: want a boolean")
			}
		case "MaxAge":
			f, ok := x.(float64)
			if !ok {
				return nil, fmt.Errorf("CorsConfiguration.MaxAge: want a number")
			}
			c.MaxAge = int(f)
		default:
			return nil, fmt.Errorf("CorsConfiguration: unknown property %s", k)
		}
	}
	return c, nil
}

// allowOrigin is the Access-Control-Allow-Origin of a request's origin:
// "*" when any origin is allowed (and credentials are not), the origin
// itself when it is allowed, "" when it is not.
func (c *CORS) allowOrigin(origin string) string {
	for _, o := range c.AllowOrigins {
		switch {
		case o == "*" && !c.AllowCredentials:
			return "*"
		case o == "*", strings.EqualFold(o, origin),
			(o == "https://*" || o == "http://*") && strings.HasPrefix(strings.ToLower(origin), strings.TrimSuffix(o, "*")):
			return origin
		}
	}
	return ""
}

// preflightOf answers an OPTIONS preflight; ok is false for any other
// request, and always without a CORS configuration.
func (c *CORS) preflightOf(r *http.Request) (Response, bool) {
	if c == nil {
		return Response{}, false
	}
	origin := r.Header.Get("Origin")
	if r.Method != http.MethodOptions || origin == "" || r.Header.Get("Access-Control-Request-Method") == "" {
		return Response{}, false
	}
	h := http.Header{}
	if allow := c.allowOrigin(origin); allow != "" {
		h.Set("Access-Control-Allow-Origin", allow)
		if len(c.AllowMethods) > 0 {
			h.Set("Access-Control-Allow-Methods", strings.Join(c.AllowMethods, ","))
		}
		if len(c.AllowHeaders) > 0 {
			h.Set("Access-Control-Allow-Headers", strings.Join(c.AllowHeaders, ","))
		}
		if c.MaxAge > 0 {
			h.Set("Access-Control-Max-Age", strconv.Itoa(c.MaxAge))
		}
		if c.AllowCredentials {
			h.Set("Access-Control-Allow-Credentials", "true")
		}
	}
	return Response{Status: http.StatusNoContent, Headers: h}, true
}

// respond replaces the CORS headers of an integration's response with the
// configured ones.
func (c *CORS) respond(r *http.Request, resp *Response) {
	if resp.Headers == nil {
		resp.Headers = http.Header{}
	}
	for k := range resp.Headers {
		if strings.HasPrefix(http.CanonicalHeaderKey(k), "Access-Control-") {
			delete(resp.Headers, k)
		}
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return
	}
	allow := c.allowOrigin(origin)
	if allow == "" {
		return
	}
	resp.Headers.Set("Access-Control-Allow-Origin", allow)
	if len(c.ExposeHeaders) > 0 {
		resp.Headers.Set("Access-Control-Expose-Headers", strings.Join(c.ExposeHeaders, ","))
	}
	if c.AllowCredentials {
		resp.Headers.Set("Access-Control-Allow-Credentials", "true")
	}
}
