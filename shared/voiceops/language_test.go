package voiceops

import "testing"

func TestValidLanguageCode(t *testing.T) {
	for s, want := range map[string]bool{
		"en": true, "en-GB": true, "es-419": true, "zh-Hant-TW": true, "fil": true,
		"": false, "e": false, "engl": false, "en_GB": false, "en-": false, "en-GB-x-y": false, "en-GB\n": false, "zh-Hant-TW-extra": false,
	} {
		if got := ValidLanguageCode(s); got != want {
			t.Errorf("ValidLanguageCode(%q) = %v, want %v", s, got, want)
		}
	}
}
