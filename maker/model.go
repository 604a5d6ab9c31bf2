package maker

import (
	"context"

	"github.com/tmc/langchaingo/llms"
)

// ModelFunc adapts a function to an llms.Model, the interface every model
// of this package is, so a test model or a wrapper needs no type of its
// own: Call, langchaingo's single-prompt method, sends the prompt as one
// human message through the function. The function must be safe for
// concurrent use (the solver draws samples in parallel), and should read
// the sample's identity from the context (SampleIDFrom) when its answer
// must be reproducible.
type ModelFunc func(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error)

var _ llms.Model = ModelFunc(nil)

// GenerateContent calls f.
func (f ModelFunc) GenerateContent(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
	return f(ctx, msgs, opts...)
}

// Call implements llms.Model's single-prompt method through
// llms.GenerateFromSinglePrompt.
func (f ModelFunc) Call(ctx context.Context, prompt string, opts ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, f, prompt, opts...)
}

// TextResponse is a one-choice response holding text, the shape a
// ModelFunc returns for a plain reply; stopReason may be "" (none given).
func TextResponse(text, stopReason string) *llms.ContentResponse {
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: text, StopReason: stopReason}}}
}
