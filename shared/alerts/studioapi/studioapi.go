// Package studioapi serves the routes of the studio host (the studio host,
// {agent_studio_url}): alert rules and firing alerts, webhook endpoints
// with their deliveries, and the internal metric intake. Each group is a
// type holding only what it uses; its Routes method lists every route with
// its authentication scheme (shared/platform/httpapi).
package studioapi
