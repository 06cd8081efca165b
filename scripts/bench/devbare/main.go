// Command devbare is one of the two baselines of the dev server's throughput
// (docs/performance.md, "Dev server throughput"): a bare net/http mux that
// answers GET /v1/alert-rules and chat respond with the bodies the dev
// server gave for them, read once from a running dev server at start. It
// reads each request's body and writes the JSON as the dev server's
// handlers do; no routing beyond the mux, no key, no store, no log.
//
//	go run ./scripts/bench/devbare -dev http://127.0.0.1:8080 -credentials creds.json -addr 127.0.0.1:8081
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
)

func main() {
	dev := flag.String("dev", "http://127.0.0.1:8080", "the running dev server whose bodies to serve")
	credsFile := flag.String("credentials", "creds.json", "the dev server's credentials `FILE`")
	addr := flag.String("addr", "127.0.0.1:8081", "`HOST:PORT` to listen on")
	flag.Parse()
	if err := run(*dev, *credsFile, *addr); err != nil {
		log.Fatal(err)
	}
}

type credentials struct {
	Accounts []struct {
		AccountID string `json:"account_id"`
		APIKey    string `json:"api_key"`
		Projects  []struct {
			ProjectID  string `json:"project_id"`
			APIKey     string `json:"api_key"`
			AgentToken string `json:"agent_token"`
		} `json:"projects"`
	} `json:"accounts"`
}

func run(dev, credsFile, addr string) error {
	raw, err := os.ReadFile(credsFile)
	if err != nil {
		return err
	}
	var c credentials
	if err := json.Unmarshal(raw, &c); err != nil || len(c.Accounts) == 0 || len(c.Accounts[0].Projects) == 0 {
		return fmt.Errorf("%s: no account with a project (%v)", credsFile, err)
	}
	a, p := c.Accounts[0], c.Accounts[0].Projects[0]
	rules, err := fetch("GET", dev+"/v1/alert-rules", "", map[string]string{"x-api-key": a.APIKey})
	if err != nil {
		return err
	}
	chat := map[string]string{"x-api-key": p.APIKey, "x-token": p.AgentToken, "content-type": "application/json"}
	chatBase := dev + "/v1/" + a.AccountID + "/" + p.ProjectID + "/chat/"
	created, err := fetch("POST", chatBase+"create", "{}", chat)
	if err != nil {
		return err
	}
	var conv struct {
		ConversationID string `json:"conversation_id"`
	}
	if err := json.Unmarshal(created, &conv); err != nil {
		return err
	}
	reply, err := fetch("POST", chatBase+"respond", `{"conversation_id":"`+conv.ConversationID+`","message":"what is my balance"}`, chat)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("GET /v1/alert-rules", answer(rules))
	mux.Handle("POST /v1/{account_id}/{project_id}/chat/respond", answer(reply))
	fmt.Fprintf(os.Stderr, "devbare: serving %d and %d bytes on %s\n", len(rules), len(reply), addr)
	return http.ListenAndServe(addr, mux)
}

// answer reads the request's body and writes body.
func answer(body []byte) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(body)
	})
}

func fetch(method, url, body string, headers map[string]string) ([]byte, error) {
	req, err := http.NewRequest(method, url, bytes.NewReader([]byte(body)))
	if err != nil {
		return nil, err
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err == nil && res.StatusCode != http.StatusOK {
		err = fmt.Errorf("%s %s: %d %s", method, url, res.StatusCode, b)
	}
	return b, err
}
