package voiceops

import (
	"strings"
	"sync"
	"testing"
)

// TestRandomID: the prefix, then n characters of the alphabet, for the
// short IDs built on the stack and the long ones that are not.
func TestRandomID(t *testing.T) {
	for _, c := range []struct {
		prefix string
		n      int
	}{{"req_", 20}, {"ar_", 22}, {"", 40}, {"", 41}, {"long_prefix_", 60}, {"x_", 0}} {
		seen := map[string]bool{}
		for range 50 {
			id := RandomID(c.prefix, c.n)
			rest, ok := strings.CutPrefix(id, c.prefix)
			if !ok || len(rest) != c.n || strings.Trim(rest, idAlphabet) != "" {
				t.Fatalf("RandomID(%q, %d) = %q", c.prefix, c.n, id)
			}
			seen[id] = true
		}
		if c.n >= 20 && len(seen) != 50 {
			t.Errorf("RandomID(%q, %d): %d distinct of 50", c.prefix, c.n, len(seen))
		}
	}
	if id := NewID(PrefixRule); !ValidRuleID(id) || len(id) != len(PrefixRule)+22 {
		t.Errorf("NewID(%q) = %q", PrefixRule, id)
	}
}

// TestRandomIDsFromTheBuffer: IDs drawn across many refills of the random
// buffer use every character about equally, IDs made at once on several
// goroutines are distinct, and a buffer's bytes are zeroed once taken.
func TestRandomIDsFromTheBuffer(t *testing.T) {
	counts := map[rune]int{}
	for range 1000 {
		for _, c := range RandomBase62(31) {
			counts[c]++
		}
	}
	// 31,000 draws, 500 expected per character (standard deviation 22).
	for _, c := range idAlphabet {
		if n := counts[c]; n < 380 || n > 620 {
			t.Errorf("%q drawn %d times of 31000, want about 500", c, n)
		}
	}

	ids := make(chan string, 8*200)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 200 {
				ids <- NewID(PrefixRule)
			}
		})
	}
	wg.Wait()
	close(ids)
	seen := map[string]bool{}
	for id := range ids {
		if seen[id] {
			t.Fatalf("%s made twice", id)
		}
		seen[id] = true
	}

	r := &randBuf{used: randChunk}
	for range 10 {
		r.next()
	}
	if r.used != 10 || [10]byte(r.b[:10]) != [10]byte{} || [randChunk - 10]byte(r.b[10:]) == [randChunk - 10]byte{} {
		t.Errorf("after 10 bytes taken from a fresh buffer: used %d, taken %v", r.used, r.b[:10])
	}
}
