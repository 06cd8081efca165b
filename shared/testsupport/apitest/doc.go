// Package apitest holds the HTTP tests of both hosts: every route of
// studioapi, chatapi, voiceapi, eventsapi, conversationsapi and outboundapi, served as the dev
// server serves them (all groups behind one httpapi handler, memory
// stores), with every response checked against the OpenAPI document. It has
// no code of its own outside tests.
package apitest
