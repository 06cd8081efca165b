package testclock

import (
	"context"
	"testing"
	"time"
)

func TestClock(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	c := At(t0)
	c.Advance(time.Minute)
	if err := c.Sleep(context.Background(), time.Second); err != nil || !c.Now().Equal(t0.Add(time.Minute+time.Second)) {
		t.Errorf("after Advance and Sleep: %v, %v", c.Now(), err)
	}
	c.Set(t0)
	if !c.Now().Equal(t0) {
		t.Errorf("after Set: %v", c.Now())
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := c.Sleep(ctx, time.Second); err == nil {
		t.Error("Sleep on a cancelled context: no error")
	}
}
