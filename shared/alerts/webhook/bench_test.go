package webhook

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"
)

// benchBody is a realistic alerts.triggered event (about 500 bytes).
var benchBody = []byte(`{"event_type":"alerts.triggered","event_id":"evt_01JBX7Q9M4ZK8T2W6YH3N5R0PD",` +
	`"created_at":"2026-05-01T10:00:00Z","alert":{"id":"alr_01JBX7Q9M4ZK8T2W6YH3N5R0PE",` +
	`"name":"High abandonment rate","project_id":"prj_01JBX7Q9M4ZK8T2W6YH3N5R0PF",` +
	`"metric":"call_abandonment_rate","operator":"gt","threshold_value":0.15,` +
	`"window_duration":"15m","current_value":0.2173,"previous_state":"ok",` +
	`"current_state":"triggered","triggered_at":"2026-05-01T09:59:58Z"}}`)

// BenchmarkSign is the signing cost per delivery: both schemes, with one
// secret and with two (during a rotation overlap).
func BenchmarkSign(b *testing.B) {
	at := time.Unix(kaTS, 0)
	for _, secrets := range [][]string{testSecrets[:1], testSecrets} {
		b.Run(fmt.Sprintf("secrets=%d", len(secrets)), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Sign("evt_01JBX7Q9M4ZK8T2W6YH3N5R0PD", at, benchBody, secrets); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkSendTLS sends signed deliveries to a local httptest TLS receiver
// from many goroutines sharing one Sender, and reports deliveries/s. The
// receiver runs in the same process, so it competes for the same CPUs.
func BenchmarkSendTLS(b *testing.B) {
	for _, proto := range []struct {
		name  string
		http2 bool
	}{{"http1.1", false}, {"http2", true}} {
		b.Run(proto.name, func(b *testing.B) {
			rc := &receiver{srv: startTLS(b, proto.http2, func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
				w.WriteHeader(http.StatusNoContent)
			})}
			s := rc.sender(b, nil)
			a := Attempt{URL: rc.srv.URL + "/hook", Body: benchBody, EventID: "evt_01JBX7Q9M4ZK8T2W6YH3N5R0PD",
				Secrets: testSecrets, Timeout: 5 * time.Second}
			b.ReportAllocs()
			b.SetParallelism(16)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if res := s.Send(context.Background(), a); res.Outcome != Delivered {
						b.Errorf("result %+v", res)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "deliveries/s")
		})
	}
}
