package main

import (
	"slices"
	"testing"
	"time"

	"github.com/voiceops/opsapi/scripts/latency"
)

func TestParseBench(t *testing.T) {
	out := `goos: linux
BenchmarkCreateRule-2   	  170000	      7021 ns/op	    3090 B/op	      80 allocs/op
BenchmarkConversationPage/append/page-2         	      70	  17520000 ns/op	 1594 allocs/op
BenchmarkDispatch-16    	   10000	    183000 ns/op	      5455 deliveries/s	     203 allocs/op
BenchmarkListRequestAB/limit=5000-2         	      36	  65412838 ns/op	    184265 a-allocs	        26.78 a-ms	       793.0 conversations/page	         0.7854 x-base-p50
PASS
`
	got := parseBench(out)
	if r := got["BenchmarkCreateRule"]; r["ns/op"] != 7021 || r["allocs/op"] != 80 || r["B/op"] != 3090 {
		t.Errorf("create: %v", r)
	}
	if r := got["BenchmarkConversationPage/append/page"]; r["ns/op"] != 17520000 {
		t.Errorf("page: %v", r)
	}
	if r := got["BenchmarkDispatch"]; r["deliveries/s"] != 5455 {
		t.Errorf("dispatch: %v", r)
	}
	if r := got["BenchmarkListRequestAB/limit=5000"]; r["a-ms"] != 26.78 || r["x-base-p50"] != 0.7854 || r["conversations/page"] != 793 {
		t.Errorf("list: %v", r)
	}
	if len(got) != 4 {
		t.Errorf("%d results: %v", len(got), got)
	}
}

func TestInitTotal(t *testing.T) {
	trace := `init internal/bytealg @0.008 ms, 0 ms clock, 0 bytes, 0 allocs
init runtime @0.10 ms, 1.1 ms clock, 0 bytes, 0 allocs
some log line
init github.com/nyaruka/phonenumbers @3.2 ms, 5.1 ms clock, 1234 bytes, 56 allocs
`
	if got, want := initTotal(trace), 6200*time.Microsecond; got != want {
		t.Errorf("initTotal = %v, want %v", got, want)
	}
}

func TestMissingEnv(t *testing.T) {
	got := missingEnv(`time=... level=ERROR msg="dialer: cannot start" error="not set in the environment: [DIAL_QUEUE_URL CALLS_TABLE]"`)
	if !slices.Equal(got, []string{"DIAL_QUEUE_URL", "CALLS_TABLE"}) {
		t.Errorf("missingEnv = %v", got)
	}
	if got := missingEnv("exit status 1"); got != nil {
		t.Errorf("missingEnv of another error = %v", got)
	}
	if m := median([]time.Duration{5, 1, 3}); m != 3 {
		t.Errorf("median = %v", m)
	}
}

func TestSpreadOf(t *testing.T) {
	got := spreadOf([]float64{5, 1, 4, 2, 3})
	if got != (spread{1, 2, 3, 4, 5}) || got.String() != "3.00 (1.00-5.00; IQR 2.00-4.00)" {
		t.Errorf("spreadOf = %+v %q", got, got)
	}
	if (spreadOf(nil) != spread{}) {
		t.Errorf("spreadOf(nil) is not zero")
	}
}

// TestParseNotify reads notifybench's summary as notifybench prints it
// (its lines are scripts/latency.Summary's), a p99 of too few trials
// included.
func TestParseNotify(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		d := make([]time.Duration, len(v))
		for i, x := range v {
			d[i] = time.Duration(x) * time.Millisecond
		}
		return d
	}
	quiet, busy := ms(200, 300, 400), ms(100, 150, 700)
	out := "trials 6, delivered 6, missing 0, doubled 0, discarded 0 (fired before their breach)\n" +
		"quiet scopes: " + latency.Summary(quiet) + "\n" +
		"busy scopes:  " + latency.Summary(busy) + "\n" +
		"all trials:   " + latency.Summary(append(quiet, busy...)) + "\n"
	r, err := parseNotify([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	if r.p50 != "200ms" || r.p99 != "n/a (max of 6)" || r.trials != "6 (delivered 6, missing 0, doubled 0)" {
		t.Errorf("all trials: %+v", r)
	}
	want := [][4]string{
		{"quiet scope (the last evaluation more than 1 s ago)", "300ms", "n/a (max of 3)", "3"},
		{"busy scope (evaluated within the last second)", "150ms", "n/a (max of 3)", "3"},
	}
	if !slices.Equal(r.classes, want) {
		t.Errorf("classes:\n got %q\nwant %q", r.classes, want)
	}
}
