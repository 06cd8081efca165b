package main

import (
	"net/http"
	"strings"

	"github.com/voiceops/opsapi/shared/ops/operatorapi"
)

// withOperator serves opsctl's operator endpoint (shared/ops/operatorapi) on
// the dev server's stores, to loopback callers with the internal key, and
// hands every other request to next. Deployed stacks have no such route:
// their operator writes to DynamoDB directly.
func withOperator(b backend, internalKeyDigest string, next http.Handler) http.Handler {
	// The pacers of both backends set rates (memory.Pacer, dynamo.Pacer).
	pacer, _ := b.pacer.(operatorapi.RateSetter)
	op := operatorapi.Handler(operatorapi.Stores{Accounts: b.stores.Accounts, Agents: b.configs, DNI: b.dni,
		Limits: b.requests, Pacer: pacer, Destinations: b.destinations}, internalKeyDigest)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, operatorapi.Path) {
			op.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}
