// Package console serves the operators' console at /console/: static
// files embedded in the binary (no CDN, no build step), under a strict
// Content-Security-Policy. The pages call the public API from the browser
// with the operator's API key, kept in the tab's sessionStorage only; the
// server side knows no key and serves no data (docs/console.md).
package console

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"path"
	"strings"

	"github.com/voiceops/opsapi/shared/platform/httpapi"
	"github.com/voiceops/opsapi/shared/voiceops"
)

//go:embed static
var static embed.FS

// Policy is the console's Content-Security-Policy when both hosts are its
// own origin (the dev server): its own scripts, styles and API only; no
// inline code, no frames, no other origin. Deployed, connect-src names
// the base host's origin too (PolicyFor).
const Policy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
	"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// PolicyFor is the policy of a console whose base host is at origin
// ("" when it is the console's own): connect-src 'self' and that origin,
// nothing wider.
func PolicyFor(origin string) string {
	if origin == "" {
		return Policy
	}
	return strings.Replace(Policy, "connect-src 'self';", "connect-src 'self' "+origin+";", 1)
}

// BaseOrigin checks the base host's URL (the alerts function's
// CONSOLE_BASE_URL) and returns its origin, scheme://host[:port]; "" for
// "" (the base host is the console's own origin).
func BaseOrigin(baseURL string) (string, error) {
	if baseURL == "" {
		return "", nil
	}
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil ||
		strings.ContainsAny(u.Host, " ;'*") {
		return "", fmt.Errorf("console: the base host's URL %q is not an http(s) URL with a host", baseURL)
	}
	return u.Scheme + "://" + u.Host, nil
}

// file is one embedded file, ready to serve.
type file struct {
	body        []byte
	contentType string
	etag        string
}

var files = load()

func load() map[string]file {
	out := map[string]file{}
	types := map[string]string{
		".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8",
		".css": "text/css; charset=utf-8", ".svg": "image/svg+xml", ".txt": "text/plain; charset=utf-8",
	}
	_ = fs.WalkDir(static, "static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := static.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		out[strings.TrimPrefix(p, "static/")] = file{body: b, contentType: types[path.Ext(p)], etag: `"` + hex.EncodeToString(sum[:8]) + `"`}
		return nil
	})
	return out
}

// Routes lists the routes of a console whose base host is its own origin
// (the dev server serves both hosts on one).
func Routes() []httpapi.Route {
	routes, _ := RoutesWith("")
	return routes
}

// RoutesWith lists the console's routes, public (the files hold no data),
// for a base host at baseURL ("" for the console's own origin): the page
// reads it from /console/config.json, and the CSP's connect-src allows
// its origin.
func RoutesWith(baseURL string) ([]httpapi.Route, error) {
	origin, err := BaseOrigin(baseURL)
	if err != nil {
		return nil, err
	}
	cfg, err := json.Marshal(struct {
		BaseURL string `json:"base_url"`
	}{strings.TrimSuffix(baseURL, "/")})
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(cfg)
	c := site{policy: PolicyFor(origin), config: file{body: cfg, contentType: "application/json", etag: `"` + hex.EncodeToString(sum[:8]) + `"`}}
	return []httpapi.Route{
		// The page itself at /console too: API Gateway's {proxy+} needs a
		// segment, so /console/ may not reach the function deployed.
		{Method: "GET", Path: "/console", Family: httpapi.StudioErrors, Auth: httpapi.Public, Handle: c.serve},
		{Method: "GET", Path: "/console/{file...}", Family: httpapi.StudioErrors, Auth: httpapi.Public, Handle: c.serve},
	}, nil
}

// site is a console: its policy and its config.json.
type site struct {
	policy string
	config file
}

func (c site) serve(w http.ResponseWriter, r *http.Request, _ httpapi.Caller) error {
	name := r.PathValue("file")
	if name == "" {
		name = "index.html"
	}
	f, ok := files[name]
	if name == "config.json" {
		f, ok = c.config, true
	}
	if !ok {
		return voiceops.Errorf(voiceops.KindNotFound, "not found")
	}
	h := w.Header()
	h.Set("Content-Security-Policy", c.policy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cache-Control", "no-cache") // revalidated by ETag: a deploy is seen at once
	h.Set("ETag", f.etag)
	if r.Header.Get("If-None-Match") == f.etag {
		w.WriteHeader(http.StatusNotModified)
		return nil
	}
	h.Set("Content-Type", f.contentType)
	_, _ = w.Write(f.body)
	return nil
}
