package main

import (
	"encoding/json"
	"html/template"
	"net/http"
	"strings"
)

// devIndex is what GET / answers: where the console, the reference and
// the document are, so that a first request to the bare address finds its
// way instead of a 404.
type devIndex struct {
	Service string `json:"service"`
	// Credentials is the file holding the demo accounts' keys ("" when
	// they went to standard output).
	Credentials string      `json:"credentials,omitempty"`
	Hosts       []indexHost `json:"hosts"`
	Links       []indexLink `json:"links"`
}

// indexHost is one of the two hosts the deployed stack has, both served
// here at one address.
type indexHost struct {
	Name   string `json:"name"`
	URL    string `json:"url"`
	Serves string `json:"serves"`
}

type indexLink struct {
	Rel   string `json:"rel"`
	Href  string `json:"href"`
	Title string `json:"title"`
}

func newDevIndex(studioURL, baseURL, credentials string) devIndex {
	return devIndex{
		Service:     "VoiceOps operations API, dev server",
		Credentials: credentials,
		Hosts: []indexHost{
			{Name: "studio", URL: studioURL, Serves: "alert rules, alerts, webhook endpoints and deliveries, metric series, the console"},
			{Name: "base", URL: baseURL, Serves: "conversations, chat, voice, outbound calls, DNI reservations, external events"},
		},
		Links: []indexLink{
			{Rel: "console", Href: studioURL + "/console/", Title: "the operators' console (studio host)"},
			{Rel: "docs", Href: studioURL + "/docs", Title: "the API reference of both hosts"},
			{Rel: "openapi", Href: studioURL + "/openapi.json", Title: "the OpenAPI document of both hosts"},
			{Rel: "metrics", Href: studioURL + "/metrics", Title: "the service's metrics, Prometheus text"},
		},
	}
}

var indexPage = template.Must(template.New("index").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{{.Service}}</title></head>
<body><h1>{{.Service}}</h1>
<ul>{{range .Links}}<li><a href="{{.Href}}">{{.Title}}</a></li>{{end}}</ul>
<h2>Hosts</h2>
<ul>{{range .Hosts}}<li>{{.Name}}: <code>{{.URL}}</code>, {{.Serves}}</li>{{end}}</ul>
{{if .Credentials}}<p>The demo accounts' keys are in <code>{{.Credentials}}</code>.</p>{{end}}
</body></html>
`))

// withIndex answers exactly GET / with the index (HTML when the client
// prefers it, as a browser does; JSON otherwise) and hands every other
// request to next as it came (no ServeMux: see withOpenAPI).
func withIndex(idx devIndex, next http.Handler) http.Handler {
	body, err := json.MarshalIndent(idx, "", "  ")
	if err != nil {
		panic(err) // plain strings only: cannot fail
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" || r.URL.RawPath != "" || (r.Method != http.MethodGet && r.Method != http.MethodHead) {
			next.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Vary", "Accept")
		if wantsHTML(r.Header.Get("Accept")) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_ = indexPage.Execute(w, idx)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(append(body, '\n'))
	})
}

// wantsHTML is whether an Accept header names text/html before any JSON
// type (a browser's does; curl's */* does not).
func wantsHTML(accept string) bool {
	for _, part := range strings.Split(accept, ",") {
		mt, _, _ := strings.Cut(strings.TrimSpace(part), ";")
		switch strings.ToLower(strings.TrimSpace(mt)) {
		case "text/html", "application/xhtml+xml":
			return true
		case "application/json", "*/*":
			return false
		}
	}
	return false
}
