package tracing_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/platform/tracing"
)

// sink keeps the datagrams a tracer sends.
type sink struct {
	mu   sync.Mutex
	docs []map[string]any
}

func (s *sink) send(tb testing.TB) func([]byte) error {
	return func(b []byte) error {
		header, body, ok := bytes.Cut(b, []byte("\n"))
		if !ok || string(header) != `{"format":"json","version":1}` {
			tb.Errorf("datagram %q lacks the daemon's header line", b)
		}
		var doc map[string]any
		if err := json.Unmarshal(body, &doc); err != nil {
			tb.Errorf("segment document %q: %v", body, err)
		}
		s.mu.Lock()
		s.docs = append(s.docs, doc)
		s.mu.Unlock()
		return nil
	}
}

const header = "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1"

func TestSubsegmentsOfASampledInvocation(t *testing.T) {
	var s sink
	at := time.Unix(1_790_000_000, 0)
	tr := tracing.NewWith(s.send(t), func() time.Time { at = at.Add(250 * time.Millisecond); return at })
	ctx := context.WithValue(context.Background(), "x-amzn-trace-id", header) //nolint:staticcheck // aws-lambda-go's key
	ctx = tracing.Annotate(ctx, "delivery_id", "dlv_1")
	outer, seg := tr.Begin(ctx, "hooks.example.com", "remote")
	_, inner := tr.Begin(outer, "DynamoDB", "aws")
	inner.SetAWS(map[string]any{"operation": "GetItem"})
	inner.End(400, errors.New("ValidationException"))
	seg.SetHTTP("POST", "https://hooks.example.com/in", 503)
	seg.End(503, nil)
	if len(s.docs) != 2 {
		t.Fatalf("%d documents, want 2", len(s.docs))
	}
	in, out := s.docs[0], s.docs[1]
	for _, d := range s.docs {
		if d["trace_id"] != "1-5759e988-bd862e3fe1be46a994272793" || d["type"] != "subsegment" || len(d["id"].(string)) != 16 {
			t.Errorf("document %v: want a subsegment of the trace with a 16-hex id", d)
		}
		if d["annotations"].(map[string]any)["delivery_id"] != "dlv_1" {
			t.Errorf("document %v: no delivery_id annotation", d)
		}
		if d["end_time"].(float64) <= d["start_time"].(float64) {
			t.Errorf("document %v: ends before it starts", d)
		}
	}
	if out["parent_id"] != "53995c3f42cd8ad8" || in["parent_id"] != out["id"] {
		t.Errorf("parents: outer %v (want the function's segment), inner %v (want the outer's id %v)", out["parent_id"], in["parent_id"], out["id"])
	}
	if out["fault"] != true || out["namespace"] != "remote" || out["http"].(map[string]any)["response"].(map[string]any)["status"] != 503.0 {
		t.Errorf("outer %v: want a remote fault with status 503", out)
	}
	if in["error"] != true || in["fault"] != nil || in["aws"].(map[string]any)["operation"] != "GetItem" {
		t.Errorf("inner %v: want an aws error (4xx) naming its operation", in)
	}
}

func TestNothingIsSentUnsampledOrOff(t *testing.T) {
	var s sink
	tr := tracing.NewWith(s.send(t), time.Now)
	for _, h := range []string{"", "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=0"} {
		ctx := context.WithValue(context.Background(), "x-amzn-trace-id", h) //nolint:staticcheck
		_, seg := tr.Begin(ctx, "x", "aws")
		seg.End(200, nil)
	}
	var off *tracing.Tracer
	ctx := context.WithValue(context.Background(), "x-amzn-trace-id", header) //nolint:staticcheck
	_, seg := off.Begin(ctx, "x", "aws")
	seg.SetHTTP("GET", "u", 200)
	seg.End(200, nil)
	if len(s.docs) != 0 {
		t.Errorf("sent %v; want nothing", s.docs)
	}
	if tracing.FromEnv(func(string) string { return "" }) != nil {
		t.Error("a tracer without AWS_XRAY_DAEMON_ADDRESS")
	}
}

func TestDaemonAddressForms(t *testing.T) {
	for _, v := range []string{"169.254.79.129:2000", "tcp:169.254.79.129:2000 udp:169.254.79.129:2000"} {
		if tracing.FromEnv(func(string) string { return v }) == nil {
			t.Errorf("%q: no tracer", v)
		}
	}
}

// FuzzParseHeader: any header parses without panicking, and the fields of
// a well-formed one come back.
func FuzzParseHeader(f *testing.F) {
	f.Add(header)
	f.Add("Root=1-5759e988-bd862e3fe1be46a994272793;Sampled=0;Lineage=a87bd80c:1|68fd508a:5")
	f.Add(";;=;Root;Parent=")
	f.Fuzz(func(t *testing.T, s string) {
		h := tracing.ParseHeader(s)
		if h.Sampled && !strings.Contains(s, "Sampled=1") {
			t.Errorf("%q: sampled without Sampled=1", s)
		}
		if !strings.ContainsAny(h.Root+h.Parent, ";") {
			built := "Root=" + h.Root + ";Parent=" + h.Parent + ";Sampled=1"
			if got := tracing.ParseHeader(built); got.Root != h.Root || got.Parent != h.Parent || !got.Sampled {
				t.Errorf("%q: parsed %+v, rebuilt %q parses as %+v", s, h, built, got)
			}
		}
	})
}
