package memory

import (
	"encoding/json"

	"github.com/voiceops/opsapi/shared/voiceops"
)

// checkItem refuses a record that DynamoDB could not hold: the memory stores
// draw the line of shared/store/dynamo (voiceops.MaxItemBytes), so that the dev
// server and the contract suite behave like the deployed stores. The size
// is the record's JSON plus extra, the bytes kept beside it (encoded maps);
// JSON spends a little more than DynamoDB's own count on names and
// punctuation, so this line is never the looser one. Records whose every
// field is bounded by validation far below the limit (alert rules) are not
// measured: encoding them on every write would cost more than the rest of
// the write.
func checkItem(v any, extra int) error {
	b, err := json.Marshal(v)
	if err != nil {
		return voiceops.Internal(err)
	}
	if n := len(b) + extra; n > voiceops.MaxItemBytes {
		return voiceops.ItemTooLarge("record", n)
	}
	return nil
}
