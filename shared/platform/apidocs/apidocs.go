// Package apidocs serves a host's part of the OpenAPI document at
// /openapi.json and a rendered reference of it at /docs: static HTML
// rendered here, no script and nothing fetched from elsewhere.
//
// The parts are generated from shared/platform/apispec/openapi.json into this
// package (go generate; a test fails when they are stale), so that a
// function embeds its host's part without linking the validator's
// OpenAPI library (about 1.5 MB of binary).
package apidocs

//go:generate go run ./gen

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/voiceops/opsapi/shared/platform/httpapi"
)

// Host is one of the two hosts of the API.
type Host string

const (
	Studio Host = "studio" // {agent_studio_url}: the studio host and our additions
	Base   Host = "base"   // {base_url}: the base host
)

var (
	//go:embed studio.json
	studioPart []byte
	//go:embed base.json
	basePart []byte
)

// Part returns the host's part of the document.
func Part(h Host) []byte {
	if h == Base {
		return basePart
	}
	return studioPart
}

// baseServer marks the paths served on the base host: their own servers
// name it (the document-wide servers are the studio host's).
const baseServer = ".api."

// Split returns the host's part of a whole document: its paths (and, on
// the studio host, the webhooks), the components, and the host's servers
// as the document-wide ones.
func Split(doc []byte, h Host) ([]byte, error) {
	var d map[string]any
	if err := json.Unmarshal(doc, &d); err != nil {
		return nil, err
	}
	paths, _ := d["paths"].(map[string]any)
	kept := map[string]any{}
	var baseServers any
	for p, item := range paths {
		it, _ := item.(map[string]any)
		servers, _ := it["servers"].([]any)
		onBase := false
		for _, s := range servers {
			if u, _ := s.(map[string]any)["url"].(string); strings.Contains(u, baseServer) {
				onBase = true
			}
		}
		if onBase {
			baseServers = servers
		}
		if onBase == (h == Base) {
			if onBase {
				delete(it, "servers") // the part's servers say it
			}
			kept[p] = it
		}
	}
	d["paths"] = kept
	if h == Base {
		if baseServers == nil {
			return nil, fmt.Errorf("apidocs: no path names the base host's servers")
		}
		d["servers"] = baseServers
		delete(d, "webhooks")
	}
	pruneComponents(d)
	return json.MarshalIndent(d, "", "  ")
}

// pruneComponents drops the components the part never refers to, by $ref
// or, for security schemes, by a security requirement.
func pruneComponents(d map[string]any) {
	comps, _ := d["components"].(map[string]any)
	used := map[string]bool{}
	var queue []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if ref := str(v["$ref"]); strings.HasPrefix(ref, "#/components/") && !used[ref] {
				used[ref] = true
				queue = append(queue, ref)
			}
			for _, req := range anySlice(v["security"]) {
				for name := range req.(map[string]any) {
					used["#/components/securitySchemes/"+name] = true
				}
			}
			for _, x := range v {
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	delete(d, "components")
	walk(d)
	d["components"] = comps
	for len(queue) > 0 {
		ref := queue[0]
		queue = queue[1:]
		walk(resolve(d, map[string]any{"$ref": ref}))
	}
	for kind, v := range comps {
		group, _ := v.(map[string]any)
		for name := range group {
			if !used["#/components/"+kind+"/"+name] {
				delete(group, name)
			}
		}
	}
}

// Routes serves the host's part at GET /openapi.json and its reference at
// GET /docs, without authentication, in the host's error family.
func Routes(h Host) []httpapi.Route {
	family := httpapi.StudioErrors
	if h == Base {
		family = httpapi.BaseErrors
	}
	part := Part(h)
	var once sync.Once
	var page []byte
	return []httpapi.Route{
		{Method: http.MethodGet, Path: "/openapi.json", Family: family, Auth: httpapi.Public,
			Handle: func(w http.ResponseWriter, _ *http.Request, _ httpapi.Caller) error {
				DocumentHeaders(w.Header())
				w.Header().Set("Cache-Control", "public, max-age=300")
				_, _ = w.Write(part)
				return nil
			}},
		{Method: http.MethodGet, Path: "/docs", Family: family, Auth: httpapi.Public,
			Handle: func(w http.ResponseWriter, _ *http.Request, _ httpapi.Caller) error {
				once.Do(func() { page = Render(part) })
				PageHeaders(w.Header())
				w.Header().Set("Cache-Control", "public, max-age=300")
				_, _ = w.Write(page)
				return nil
			}},
	}
}

// Content-Security-Policy of the reference page and of the document. The
// page is ours alone: no script, no outside resource, its styles inline;
// the document is data and may load nothing. Neither may be framed.
const (
	PagePolicy     = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
	DocumentPolicy = "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)

// PageHeaders are the headers of the reference page (/docs), wherever it
// is served (the dev server too).
func PageHeaders(h http.Header) {
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", PagePolicy)
	httpapi.NoSniff(h)
}

// DocumentHeaders are the headers of the document (/openapi.json).
func DocumentHeaders(h http.Header) {
	h.Set("Content-Type", "application/json")
	h.Set("Content-Security-Policy", DocumentPolicy)
	httpapi.NoSniff(h)
}

var methods = []string{"get", "post", "put", "patch", "delete"}

// Render returns the reference page of a document: every operation with
// its parameters, request body and responses, then every schema with its
// properties. A document it cannot read renders as a page saying so.
func Render(doc []byte) []byte {
	var d map[string]any
	if err := json.Unmarshal(doc, &d); err != nil {
		return []byte("<!doctype html><title>API reference</title><p>The document cannot be read: " + html.EscapeString(err.Error()))
	}
	var b strings.Builder
	info, _ := d["info"].(map[string]any)
	title := str(info["title"])
	b.WriteString(`<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">`)
	fmt.Fprintf(&b, "<title>%s</title>", esc(title))
	b.WriteString(`<style>body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#222}` +
		`code,pre{font-family:ui-monospace,monospace;background:#f4f4f4;padding:0 .2em}h2{border-bottom:1px solid #ccc;margin-top:2.5rem}` +
		`.m{font-weight:bold;text-transform:uppercase;margin-right:.5em}table{border-collapse:collapse}td,th{border:1px solid #ddd;padding:.2em .5em;text-align:left;vertical-align:top}` +
		`section{margin:1.5rem 0}</style></head><body>`)
	fmt.Fprintf(&b, "<h1>%s</h1><p>%s</p>", esc(title), esc(str(info["description"])))
	b.WriteString(`<p><a href="/openapi.json">The OpenAPI document</a> (JSON).</p>`)
	if servers, ok := d["servers"].([]any); ok {
		b.WriteString("<h2>Servers</h2><ul>")
		for _, s := range servers {
			m, _ := s.(map[string]any)
			fmt.Fprintf(&b, "<li><code>%s</code>: %s</li>", esc(str(m["url"])), esc(str(m["description"])))
		}
		b.WriteString("</ul>")
	}
	paths, _ := d["paths"].(map[string]any)
	b.WriteString("<h2>Operations</h2>")
	for _, p := range sortedKeys(paths) {
		item, _ := paths[p].(map[string]any)
		for _, m := range methods {
			op, ok := item[m].(map[string]any)
			if !ok {
				continue
			}
			fmt.Fprintf(&b, `<section id="%s"><h3><span class="m">%s</span><code>%s</code></h3>`, esc(str(op["operationId"])), m, esc(p))
			fmt.Fprintf(&b, "<p><b>%s</b></p><p>%s</p>", esc(str(op["summary"])), esc(str(op["description"])))
			params := append(anySlice(item["parameters"]), anySlice(op["parameters"])...)
			if len(params) > 0 {
				b.WriteString("<table><tr><th>parameter</th><th>in</th><th>description</th></tr>")
				for _, prm := range params {
					pm := resolve(d, prm)
					req := ""
					if pm["required"] == true {
						req = " (required)"
					}
					fmt.Fprintf(&b, "<tr><td><code>%s</code>%s</td><td>%s</td><td>%s</td></tr>", esc(str(pm["name"])), req, esc(str(pm["in"])), esc(str(pm["description"])))
				}
				b.WriteString("</table>")
			}
			if body := resolve(d, op["requestBody"]); body != nil {
				fmt.Fprintf(&b, "<p>Request body: %s</p>", schemaNames(d, body))
			}
			responses, _ := op["responses"].(map[string]any)
			b.WriteString("<table><tr><th>status</th><th>response</th></tr>")
			for _, code := range sortedKeys(responses) {
				r := resolve(d, responses[code])
				fmt.Fprintf(&b, "<tr><td>%s</td><td>%s %s</td></tr>", esc(code), esc(str(r["description"])), schemaNames(d, r))
			}
			b.WriteString("</table></section>")
		}
	}
	comps, _ := d["components"].(map[string]any)
	schemas, _ := comps["schemas"].(map[string]any)
	b.WriteString("<h2>Schemas</h2>")
	for _, name := range sortedKeys(schemas) {
		s, _ := schemas[name].(map[string]any)
		fmt.Fprintf(&b, `<section id="schema-%s"><h3><code>%s</code></h3><p>%s</p>`, esc(name), esc(name), esc(str(s["description"])))
		if props, ok := s["properties"].(map[string]any); ok {
			required := map[string]bool{}
			for _, r := range anySlice(s["required"]) {
				required[str(r)] = true
			}
			b.WriteString("<table><tr><th>property</th><th>description</th></tr>")
			for _, pn := range sortedKeys(props) {
				pv, _ := props[pn].(map[string]any)
				req := ""
				if required[pn] {
					req = " (required)"
				}
				desc := str(pv["description"])
				if ref := str(pv["$ref"]); ref != "" {
					desc = strings.TrimSpace(desc + " " + refName(ref))
				}
				fmt.Fprintf(&b, "<tr><td><code>%s</code>%s</td><td>%s</td></tr>", esc(pn), req, esc(desc))
			}
			b.WriteString("</table>")
		}
		b.WriteString("</section>")
	}
	b.WriteString("</body></html>\n")
	return []byte(b.String())
}

// schemaNames links the schemas of a request body or response's content.
func schemaNames(d map[string]any, r map[string]any) string {
	content, _ := r["content"].(map[string]any)
	var out []string
	for _, ct := range sortedKeys(content) {
		media, _ := content[ct].(map[string]any)
		schema, _ := media["schema"].(map[string]any)
		name := "inline schema"
		if ref := str(schema["$ref"]); ref != "" {
			name = fmt.Sprintf(`<a href="#schema-%s">%s</a>`, esc(refName(ref)), esc(refName(ref)))
		}
		out = append(out, fmt.Sprintf("<code>%s</code> %s", esc(ct), name))
	}
	return strings.Join(out, ", ")
}

// resolve follows a local $ref (components/parameters, responses,
// requestBodies).
func resolve(d map[string]any, v any) map[string]any {
	m, _ := v.(map[string]any)
	ref := str(m["$ref"])
	if !strings.HasPrefix(ref, "#/") {
		return m
	}
	var cur any = d
	for _, part := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
		cm, _ := cur.(map[string]any)
		cur = cm[strings.NewReplacer("~1", "/", "~0", "~").Replace(part)]
	}
	out, _ := cur.(map[string]any)
	return out
}

func refName(ref string) string { return ref[strings.LastIndexByte(ref, '/')+1:] }

func sortedKeys(m map[string]any) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

func anySlice(v any) []any { s, _ := v.([]any); return s }

func str(v any) string { s, _ := v.(string); return s }

func esc(s string) string { return html.EscapeString(s) }
