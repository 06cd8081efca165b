// Package console serves the operators' console at /console/: static
// files embedded in the binary (no CDN, no build step), under a strict
// Content-Security-Policy. The pages call the public API from the browser
// with the operator's API key, kept in the tab's sessionStorage only; the
// server side knows no key and serves no data (README, "Console").
package console

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"net/http"
	"path"
	"strings"

	"github.com/voiceops/opsapi/shared/httpapi"
	"github.com/voiceops/opsapi/shared/voiceops"
)

//go:embed static
var static embed.FS

// Policy is the console's Content-Security-Policy: its own scripts,
// styles and API only; no inline code, no frames, no other origin.
// connect-src also allows the base host when the operator names one
// (base-host pages), which the page does from its own origin only here.
const Policy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
	"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

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

// Routes lists the console's routes: public (the files hold no data).
func Routes() []httpapi.Route {
	return []httpapi.Route{
		// The page itself at /console too: API Gateway's {proxy+} needs a
		// segment, so /console/ may not reach the function deployed.
		{Method: "GET", Path: "/console", Family: httpapi.Doc1, Auth: httpapi.Public, Handle: serve},
		{Method: "GET", Path: "/console/{file...}", Family: httpapi.Doc1, Auth: httpapi.Public, Handle: serve},
	}
}

func serve(w http.ResponseWriter, r *http.Request, _ httpapi.Caller) error {
	name := r.PathValue("file")
	if name == "" {
		name = "index.html"
	}
	f, ok := files[name]
	if !ok {
		return voiceops.Errorf(voiceops.KindNotFound, "not found")
	}
	h := w.Header()
	h.Set("Content-Security-Policy", Policy)
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
