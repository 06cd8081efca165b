package voiceops

import "fmt"

// Size limits of what callers send and what ends up in a stored record.
// Every field that reaches a DynamoDB item has a limit checked before the
// write (docs/api.md's "Limits" table lists them), so that the sum of a
// record's fields stays under DynamoDB's item limit and a valid request
// never meets it. The stores enforce MaxItemBytes themselves as the last
// line (the memory stores too, so that the dev server and the contract
// suite behave like DynamoDB).
const (
	// MaxItemBytes is DynamoDB's item limit: 400 KB, attribute names
	// included.
	MaxItemBytes = 400 << 10

	// MaxAttributesBytes bounds a conversation's integration_attributes as
	// JSON: what a create sends, and what the merges of later turns make.
	MaxAttributesBytes = 64 << 10
	// MaxMetadataBytes bounds a turn's metadata as JSON.
	MaxMetadataBytes = 64 << 10
	// MaxMessageBytes bounds a user message (chat message and
	// initial_message, a voice transcript) in UTF-8 bytes.
	MaxMessageBytes = 32 << 10
	// MaxDTMFBytes bounds the DTMF digits of a voice turn.
	MaxDTMFBytes = 256
	// MaxStateBytes bounds a conversation's state as JSON: what the agent
	// and the project's functions set, merged.
	MaxStateBytes = 64 << 10
	// MaxDNIAttributesBytes bounds a DNI reservation's attributes as JSON:
	// they are stored with the number, then become the call's
	// integration_attributes.
	MaxDNIAttributesBytes = MaxAttributesBytes
)

// ItemTooLarge is the error of a store asked to write a record over
// MaxItemBytes: 413, and nothing is written. The field limits make it
// unreachable for valid requests; it names the record and its size.
func ItemTooLarge(record string, size int) *Error {
	return &Error{Kind: KindTooLarge, Message: fmt.Sprintf("the %s would be %d bytes stored; a record holds at most %d", record, size, MaxItemBytes)}
}

// TooLargeField is the validation error of a field over its size limit.
func TooLargeField(field string, size, max int) *Error {
	return &Error{Kind: KindInvalid, Message: "validation failed", Fields: []FieldError{{Field: field, Message: SizeMessage(size, max)}}}
}

// SizeMessage says a field's size against its limit.
func SizeMessage(size, max int) string {
	return fmt.Sprintf("is %d bytes; at most %d bytes are accepted", size, max)
}
