package twilioapi

import (
	"strings"
	"testing"

	"github.com/voiceops/opsapi/shared/calls/telephony/twilio"
)

// FuzzParseForm: a form ParseForm accepts has one value per name, each
// name starting with a letter, and encodes back to a form it accepts
// equally.
func FuzzParseForm(f *testing.F) {
	for _, s := range []string{"", "AccountSid=AC1&SpeechResult=hi+there", "2AccountSid=x", "Digits=1&Digits=2", "a=%zz", "msg=Gather+End"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		form, err := ParseForm(body)
		if err != nil {
			return
		}
		for k, v := range form {
			if !twilioName(k) || len(v) != 1 {
				t.Fatalf("%q accepted with %q=%q", body, k, v)
			}
		}
		again, err := ParseForm(form.Encode())
		if err != nil || len(again) != len(form) {
			t.Fatalf("%q: its encoding %q is refused or differs: %v", body, form.Encode(), err)
		}
		for k := range form {
			if again.Get(k) != form.Get(k) {
				t.Fatalf("%q: %s changed from %q to %q", body, k, form.Get(k), again.Get(k))
			}
		}
	})
}

// FuzzTurnNumber: a query TurnNumber accepts is exactly what TurnURL (or
// TurnResultURL, for a result) writes for its number.
func FuzzTurnNumber(f *testing.F) {
	for _, s := range []string{"turn=1", "turn=", "turn=01", "turn=1A", "turn=2&x=1", "turn=2&result=1", "turn=2&result=1A"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, q string) {
		n, result, err := TurnNumber(q)
		if err != nil {
			return
		}
		want := twilio.TurnURL("", "CA1", "conv_1", n)
		if result {
			want = twilio.TurnResultURL("", "CA1", "conv_1", n)
		}
		if n < 1 || want[strings.IndexByte(want, '?')+1:] != q {
			t.Fatalf("%q accepted as %d (result %v)", q, n, result)
		}
	})
}
