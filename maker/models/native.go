package models

import "github.com/mdap-go/mdap/maker"

var _ maker.NativeToolModel = (*model)(nil)

// NativeTools implements maker.NativeToolModel: OpenAI-compatible servers
// (openai:) and Anthropic (anthropic:) take tool definitions natively
// through langchaingo; langchaingo's client of Ollama's native API
// (ollama:) drops them, so such a model is told of its tools in the
// prompt (use openai: on Ollama's /v1 for native tools).
func (m *model) NativeTools() bool { return m.Spec.NativeTools() }

// NativeTools reports whether a model of this spec takes tool definitions
// natively (see model.NativeTools): openai: and anthropic: do, ollama: and
// sim do not. A coordinator over NATS asks it of the model its workers
// serve.
func (s Spec) NativeTools() bool {
	p := providerNamed(s.Provider)
	return p != nil && p.NativeTools
}
