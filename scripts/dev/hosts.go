package main

import (
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/voiceops/opsapi/shared/platform/httpapi"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// hostNames are the Host names the dev server answers: its loopback names,
// the host of -addr, and the host of -public-url (Twilio's callbacks come
// through a tunnel under that name). A page of another site whose name
// was rebound to 127.0.0.1 sends its own name as Host, so it gets a 421
// and reads nothing: not the API, /metrics or the documents.
type hostNames struct {
	names map[string]bool
	// anyIP: -addr listens on every interface (0.0.0.0, ::), so any
	// address of the machine is its own. An IP literal is never a
	// rebound name: the page's origin is then that address itself.
	anyIP bool
}

func newHostNames(addr, publicURL string) hostNames {
	h := hostNames{names: map[string]bool{"localhost": true}}
	if host, _, err := net.SplitHostPort(addr); err == nil {
		if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
			h.anyIP = true
		} else {
			h.names[strings.ToLower(host)] = true
		}
	}
	if u, err := url.Parse(publicURL); err == nil && u.Hostname() != "" {
		h.names[strings.ToLower(u.Hostname())] = true
	}
	return h
}

// allows reports whether a request's Host header names this server.
func (h hostNames) allows(hostHeader string) bool {
	host := hostHeader
	if hp, _, err := net.SplitHostPort(hostHeader); err == nil {
		host = hp
	}
	host = strings.ToLower(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"))
	if h.names[host] {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && (ip.IsLoopback() || h.anyIP || h.names[ip.String()])
}

// withHosts answers a request for another Host name 421 in the studio host's error
// shape, and gives every answer nosniff (the documents, /metrics and the
// operator endpoint are served outside the API's middleware).
func withHosts(hosts hostNames, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		httpapi.NoSniff(w.Header())
		if !hosts.allows(r.Host) {
			id := "req_" + voiceops.RandomBase62(20)
			w.Header().Set("X-Request-Id", id)
			httpapi.WriteJSON(w, http.StatusMisdirectedRequest, httpapi.StudioErrorBody{
				Message: "this server answers only its own host names (localhost, loopback addresses, -addr, -public-url)", RequestID: id})
			return
		}
		next.ServeHTTP(w, r)
	})
}
