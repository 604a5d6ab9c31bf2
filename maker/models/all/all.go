// Package all registers every model provider of mdap with maker/models
// (openai:, ollama:, anthropic:): what a command, a server or a batch that
// opens any spec imports for its effect,
//
//	import _ "github.com/mdap-go/mdap/maker/models/all"
//
// or calls for the model its --model specs name (Open).
package all

import (
	"fmt"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/models"
	_ "github.com/mdap-go/mdap/maker/models/anthropic" // anthropic:
	_ "github.com/mdap-go/mdap/maker/models/ollama"    // ollama:
	_ "github.com/mdap-go/mdap/maker/models/openai"    // openai:
	"github.com/tmc/langchaingo/llms"
)

// Open opens every spec with o (models.Open): the one model, or, for
// several, a maker.Ensemble of them in order (sample i of a step goes to
// model i mod n). Errors are models.Open's, naming the spec; no spec is
// models.ErrSpec.
func Open(specs []string, o models.Options) (llms.Model, error) {
	if len(specs) == 0 {
		return nil, fmt.Errorf("%w: no model; use %s", models.ErrSpec, models.Specs)
	}
	ms := make([]llms.Model, 0, len(specs))
	for _, spec := range specs {
		m, err := models.Open(spec, o)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", spec, err)
		}
		ms = append(ms, m)
	}
	if len(ms) == 1 {
		return ms[0], nil
	}
	return maker.NewEnsemble(ms...)
}
