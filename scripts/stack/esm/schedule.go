package esm

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"
)

// Schedule is an AWS::Events::Rule with a rate expression and its Lambda
// targets.
type Schedule struct {
	RuleARN string
	Every   time.Duration
	Targets []Target
	Account string
	Region  string
}

// Target is one rule target: a function and its Input, if any.
type Target struct {
	Function string
	Input    string // constant JSON input; "" sends the scheduled event
}

// ParseRate reads "rate(5 minutes)".
func ParseRate(expr string) (time.Duration, error) {
	inner, ok := strings.CutPrefix(expr, "rate(")
	if !ok || !strings.HasSuffix(inner, ")") {
		return 0, fmt.Errorf("schedule %q: the runner supports rate() expressions only", expr)
	}
	f := strings.Fields(strings.TrimSuffix(inner, ")"))
	if len(f) != 2 {
		return 0, fmt.Errorf("schedule %q: want rate(N unit)", expr)
	}
	n, err := strconv.Atoi(f[0])
	if err != nil || n < 1 {
		return 0, fmt.Errorf("schedule %q: bad number", expr)
	}
	units := map[string]time.Duration{"minute": time.Minute, "minutes": time.Minute, "hour": time.Hour, "hours": time.Hour, "day": 24 * time.Hour, "days": 24 * time.Hour}
	u, ok := units[f[1]]
	if !ok {
		return 0, fmt.Errorf("schedule %q: unknown unit %q", expr, f[1])
	}
	return time.Duration(n) * u, nil
}

// AsyncInvoke runs a function asynchronously (EventBridge's invocation).
type AsyncInvoke func(ctx context.Context, function string, payload []byte)

// RunSchedule fires the rule every period (its Every, or every when not
// zero: the speed-up for tests) until ctx ends.
func RunSchedule(ctx context.Context, s Schedule, every time.Duration, invoke AsyncInvoke, log *slog.Logger) {
	if every == 0 {
		every = s.Every
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			for _, tg := range s.Targets {
				payload := []byte(tg.Input)
				if tg.Input == "" {
					payload = ScheduledEvent(s, now)
				}
				invoke(ctx, tg.Function, payload)
			}
		}
	}
}

// ScheduledEvent is the event EventBridge sends a rule's targets.
func ScheduledEvent(s Schedule, at time.Time) []byte {
	id := make([]byte, 16)
	_, _ = rand.Read(id)
	h := hex.EncodeToString(id)
	b, _ := json.Marshal(map[string]any{
		"version": "0", "id": h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:],
		"detail-type": "Scheduled Event", "source": "aws.events", "account": s.Account,
		"time": at.UTC().Truncate(time.Second).Format(time.RFC3339), "region": s.Region,
		"resources": []string{s.RuleARN}, "detail": map[string]any{},
	})
	return b
}
