package voiceops

import (
	"regexp"
	"sync"
)

// languagePattern accepts language codes, with a region or a script and
// region (en, en-GB, es-419, zh-Hant-TW). Compiled on first use, so that
// package init stays cheap in every function.
var languagePattern = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8}){0,2}$`)
})

// ValidLanguageCode says whether s is a language code (the chat's and the
// voice intake's asr/tts codes, the concurrency series' language filter).
func ValidLanguageCode(s string) bool { return languagePattern().MatchString(s) }
