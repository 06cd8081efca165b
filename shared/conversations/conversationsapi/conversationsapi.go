// Package conversationsapi serves the base host's groups (the base host) that read
// a project's conversations: the conversations lists (v3 and v1), the
// concurrency series and the handoff state. It links no conversation
// engine, agents or hooks (functions/conversations runs none). Each group
// is a type holding only the interfaces it uses; its Routes method lists
// every route with its authentication scheme (shared/platform/httpapi).
package conversationsapi
