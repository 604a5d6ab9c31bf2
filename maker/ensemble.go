package maker

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/mdap-go/mdap/internal/fielderr"
	"github.com/tmc/langchaingo/llms"
)

// ErrConfig is wrapped by every error about a configuration value: an
// Ensemble, an AdaptiveK policy. The message names the value and how to
// fix it.
var ErrConfig = fielderr.ErrConfig

// Ensemble is an llms.Model made of several: sample i of every step goes
// to member i mod n, so a step's votes come from every member in turn and
// errors that one model makes alike are outvoted by the others. The
// solver reports samples, votes, tokens and cost per member (see
// Report.Models). A call without a sample identity (SampleIDFrom) goes to
// the members in turn. Safe for concurrent use if the members are.
type Ensemble struct {
	members []llms.Model
	calls   atomic.Uint64
}

var _ llms.Model = (*Ensemble)(nil)

// NewEnsemble returns an ensemble of models, in order. Errors wrap
// ErrConfig: no model, or a nil one.
func NewEnsemble(models ...llms.Model) (*Ensemble, error) {
	if len(models) == 0 {
		return nil, fmt.Errorf("%w: no model", ErrConfig)
	}
	if i := slices.Index(models, nil); i >= 0 {
		return nil, fmt.Errorf("%w: model %d is nil", ErrConfig, i)
	}
	return &Ensemble{members: slices.Clone(models)}, nil
}

// Members returns the ensemble's models, in order.
func (e *Ensemble) Members() []llms.Model { return slices.Clone(e.members) }

// Member returns the model that draws sample index.
func (e *Ensemble) Member(index int) llms.Model { return e.members[index%len(e.members)] }

// GenerateContent sends the call to the member of the sample's index.
func (e *Ensemble) GenerateContent(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
	i := 0
	if id, ok := SampleIDFrom(ctx); ok {
		i = id.Index
	} else {
		i = int((e.calls.Add(1) - 1) % uint64(len(e.members)))
	}
	return e.Member(i).GenerateContent(ctx, msgs, opts...)
}

// Call implements llms.Model's single-prompt method.
func (e *Ensemble) Call(ctx context.Context, prompt string, opts ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, e, prompt, opts...)
}

// Identity names every member, in order (see ModelIdentity).
func (e *Ensemble) Identity() string {
	ids := make([]string, len(e.members))
	for i, m := range e.members {
		ids[i] = ModelIdentity(m)
	}
	return "ensemble(" + strings.Join(ids, ", ") + ")"
}

// Priced is implemented by models that know their price; the solver costs
// their samples at it instead of at Solver.Price.
type Priced interface {
	Price() Price
}

// members returns the models that draw samples, for attribution: the
// ensemble's members, or the one model.
func members(m llms.Model) []llms.Model {
	if e, ok := m.(*Ensemble); ok {
		return e.members
	}
	return []llms.Model{m}
}
