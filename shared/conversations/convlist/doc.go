// Package convlist reads a project's conversations list: the pages (offset
// and keyset), the random samples and the transcript search. It is apart
// from shared/conversations/conversation (the engine: agents, hooks) so that the
// conversations function, which only lists and reads, links no engine.
package convlist
