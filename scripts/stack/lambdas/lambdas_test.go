package lambdas

import "testing"

func TestIsErrorPayload(t *testing.T) {
	for out, want := range map[string]bool{
		`{"errorMessage":"boom","errorType":"errorString"}`:                 true,
		`{"errorMessage":"boom","errorType":"x","stackTrace":[]}`:           true,
		`{"statusCode":500,"body":"{}","errorMessage":"x","errorType":"y"}`: false, // a response that happens to carry the names
		`{"statusCode":200,"body":"ok"}`:                                    false,
		`{"batchItemFailures":[]}`:                                          false,
		`null`:                                                              false,
		`Task timed out after 10.00 seconds`:                                false,
	} {
		if got := isErrorPayload([]byte(out)); got != want {
			t.Errorf("isErrorPayload(%s) = %v, want %v", out, got, want)
		}
	}
}
