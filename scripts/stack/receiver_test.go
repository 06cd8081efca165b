//go:build stack

package main

import (
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"sync"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// functionReceiver is a project's functions on a loopback http://
// receiver (signed as HTTPS functions are): it records each call with its
// signature's check and answers it with answer(call), after delay (the
// function's own time, which a turn's tool_calls duration includes).
type functionReceiver struct {
	wh     *standardwebhooks.Webhook
	answer func(functionCall) any
	delay  time.Duration
	mu     sync.Mutex
	calls  []functionCall
}

type functionCall struct {
	Hook string `json:"hook"`
	Conv struct {
		ID      string `json:"id"`
		Channel string `json:"channel"`
	} `json:"conv"`
	Extra    map[string]any `json:"extra"`
	verified error
}

// argument is the call's tool argument name (a Bedrock tool call's
// extra.arguments), "" when absent.
func (c functionCall) argument(name string) string {
	args, _ := c.Extra["arguments"].(map[string]any)
	v, _ := args[name].(string)
	return v
}

func (rc *functionReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var c functionCall
	if err := json.Unmarshal(body, &c); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	c.verified = rc.wh.Verify(body, r.Header)
	rc.mu.Lock()
	rc.calls = append(rc.calls, c)
	rc.mu.Unlock()
	time.Sleep(rc.delay)
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(rc.answer(c))
}

func (rc *functionReceiver) taken() []functionCall {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return slices.Clone(rc.calls)
}
