package agent

import (
	"errors"
	"testing"
)

// FuzzDecodeReply: no answer of an HTTP agent panics the decoder, and what
// it accepts has a response.
func FuzzDecodeReply(f *testing.F) {
	f.Add([]byte(`{"response": "hi", "state": {"a": [1, {"b": null}]}, "intents": ["x"], "entities": [{}], "ood": true, "end": false}`))
	f.Add([]byte(`{"response": "", "handoff": {"sip": {"outbound_endpoint": "e"}}}`))
	f.Add([]byte(`{"response": 1e400}`))
	f.Add([]byte(`{"response": "x", "response": "y"}`))
	f.Add([]byte(`[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := decodeReply(b)
		if err != nil {
			if !errors.Is(err, ErrBadReply) {
				t.Fatalf("error not ErrBadReply: %v", err)
			}
			return
		}
		if r.Handoff != nil && r.Handoff.Destination == "" {
			t.Fatalf("a handoff without destination: %+v", r.Handoff)
		}
	})
}
