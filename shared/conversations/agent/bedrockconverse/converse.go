// Package bedrockconverse makes a Bedrock agent's model call (agent.Model)
// with the SDK's Bedrock Runtime client: Converse. Only the functions that
// answer conversations link it.
package bedrockconverse

import (
	"context"
	"errors"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/aws/smithy-go"

	"github.com/voiceops/opsapi/shared/conversations/agent"
)

// API is the one SDK call the model makes.
type API interface {
	Converse(ctx context.Context, in *bedrockruntime.ConverseInput, optFns ...func(*bedrockruntime.Options)) (*bedrockruntime.ConverseOutput, error)
}

// NewClient returns the SDK's client for cfg, with the SDK's own retries
// off: the agent retries throttling itself, within its turn's deadline,
// and counts every failed call. The endpoint is the SDK's
// (AWS_ENDPOINT_URL_BEDROCK_RUNTIME or AWS_ENDPOINT_URL, as loaded into
// cfg by config.LoadDefaultConfig).
func NewClient(cfg aws.Config) *bedrockruntime.Client {
	return bedrockruntime.NewFromConfig(cfg, func(o *bedrockruntime.Options) { o.Retryer = aws.NopRetryer{} })
}

// Model is agent.Model over the SDK.
type Model struct{ api API }

var _ agent.Model = (*Model)(nil)

// New returns the model calling api.
func New(api API) *Model { return &Model{api: api} }

// Converse makes one Converse call.
func (m *Model) Converse(ctx context.Context, in agent.ModelInput) (agent.ModelOutput, error) {
	req := &bedrockruntime.ConverseInput{ModelId: aws.String(in.ModelID)}
	if in.System != "" {
		req.System = []types.SystemContentBlock{&types.SystemContentBlockMemberText{Value: in.System}}
	}
	ic := &types.InferenceConfiguration{}
	if in.MaxTokens > 0 {
		ic.MaxTokens = aws.Int32(int32(in.MaxTokens))
	}
	if in.Temperature != nil {
		ic.Temperature = aws.Float32(float32(*in.Temperature))
	}
	req.InferenceConfig = ic
	for _, msg := range in.Messages {
		req.Messages = append(req.Messages, toMessage(msg))
	}
	if len(in.Tools) > 0 {
		tc := &types.ToolConfiguration{}
		for _, t := range in.Tools {
			tc.Tools = append(tc.Tools, &types.ToolMemberToolSpec{Value: types.ToolSpecification{
				Name: aws.String(t.Name), Description: aws.String(t.Description),
				InputSchema: &types.ToolInputSchemaMemberJson{Value: document.NewLazyDocument(t.InputSchema)},
			}})
		}
		req.ToolConfig = tc
	}
	if g := in.Guardrail; g != nil {
		req.GuardrailConfig = &types.GuardrailConfiguration{GuardrailIdentifier: aws.String(g.ID), GuardrailVersion: aws.String(g.Version)}
	}
	out, err := m.api.Converse(ctx, req)
	if err != nil {
		return agent.ModelOutput{}, modelError(ctx, err)
	}
	res := agent.ModelOutput{StopReason: string(out.StopReason)}
	if u := out.Usage; u != nil {
		res.InputTokens, res.OutputTokens = int(aws.ToInt32(u.InputTokens)), int(aws.ToInt32(u.OutputTokens))
	}
	if mt := out.Metrics; mt != nil {
		res.Latency = time.Duration(aws.ToInt64(mt.LatencyMs)) * time.Millisecond
	}
	msg, ok := out.Output.(*types.ConverseOutputMemberMessage)
	if !ok {
		return agent.ModelOutput{}, &agent.ModelError{Code: "NoMessage"}
	}
	res.Message = fromMessage(msg.Value)
	return res, nil
}

// modelError keeps the error's code only: the service's message may quote
// the prompt.
func modelError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return &agent.ModelError{Code: "DeadlineExceeded"}
	}
	var api smithy.APIError
	if errors.As(err, &api) {
		code := api.ErrorCode()
		return &agent.ModelError{Code: code, Throttled: code == "ThrottlingException" || code == "ServiceUnavailableException"}
	}
	return &agent.ModelError{Code: "Unreachable"}
}

func toMessage(m agent.ModelMessage) types.Message {
	out := types.Message{Role: types.ConversationRole(m.Role)}
	for _, b := range m.Content {
		switch {
		case b.ToolUse != nil:
			out.Content = append(out.Content, &types.ContentBlockMemberToolUse{Value: types.ToolUseBlock{
				ToolUseId: aws.String(b.ToolUse.ID), Name: aws.String(b.ToolUse.Name), Input: document.NewLazyDocument(b.ToolUse.Input)}})
		case b.ToolResult != nil:
			r := types.ToolResultBlock{ToolUseId: aws.String(b.ToolResult.ID),
				Content: []types.ToolResultContentBlock{&types.ToolResultContentBlockMemberJson{Value: document.NewLazyDocument(b.ToolResult.Content)}}}
			if b.ToolResult.Failed {
				r.Status = types.ToolResultStatusError
			} else {
				r.Status = types.ToolResultStatusSuccess
			}
			out.Content = append(out.Content, &types.ContentBlockMemberToolResult{Value: r})
		default:
			out.Content = append(out.Content, &types.ContentBlockMemberText{Value: b.Text})
		}
	}
	return out
}

func fromMessage(m types.Message) agent.ModelMessage {
	out := agent.ModelMessage{Role: string(m.Role)}
	for _, c := range m.Content {
		switch b := c.(type) {
		case *types.ContentBlockMemberText:
			out.Content = append(out.Content, agent.ModelBlock{Text: b.Value})
		case *types.ContentBlockMemberToolUse:
			var input any
			if b.Value.Input != nil {
				_ = b.Value.Input.UnmarshalSmithyDocument(&input)
			}
			out.Content = append(out.Content, agent.ModelBlock{ToolUse: &agent.ModelToolUse{
				ID: aws.ToString(b.Value.ToolUseId), Name: aws.ToString(b.Value.Name), Input: input}})
		}
	}
	return out
}
