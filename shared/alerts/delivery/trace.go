package delivery

import (
	"errors"
	"net/url"
)

// traceName is an endpoint's subsegment name: its host.
func traceName(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.Host != "" {
		return u.Host
	}
	return "webhook"
}

// traceURL is the endpoint's URL as traced: without its query, which may
// carry a receiver's token.
func traceURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	u.RawQuery, u.Fragment, u.User = "", "", nil
	return u.String()
}

func errorOf(text string) error {
	if text == "" {
		return nil
	}
	return errors.New(text)
}
