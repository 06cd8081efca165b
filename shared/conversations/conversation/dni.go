package conversation

import (
	"context"
	"time"

	"github.com/voiceops/opsapi/shared/voiceops"
)

// consumeDNI ends the DNI reservation of the number a voice call arrives on
// (docs/outbound-calls.md, DNI): the reservation's attributes become the
// conversation's integration attributes when the call brought none. A call
// to a number without a live reservation starts as usual. It runs once the
// project and variant are known, so a refused start consumes nothing.
func (e *Engine) consumeDNI(ctx context.Context, in *StartInput, now time.Time) error {
	if e.DNI == nil || in.Channel != voiceops.ChannelVoice || in.ToNumber == "" {
		return nil
	}
	attrs, ok, err := e.DNI.Consume(ctx, in.AccountID, in.ProjectID, in.ToNumber, now)
	if err != nil {
		return err
	}
	if ok && in.IntegrationAttributes == nil {
		in.IntegrationAttributes = attrs
	}
	return nil
}
