package maker

import (
	"encoding/json"

	"github.com/tmc/langchaingo/llms"
)

// newAgent builds the sample agent of every path that draws a sample:
// Solve's races (and their escalation, through withModel) and Sampler (and so
// maker/calibrate and maker/mcpserver). It is the only place a microagent
// is made (TestOneAgentConstructor checks the source), so a setting of the
// Solver that shapes a call reaches every path or none: the model, the
// reply cap, the temperature schedule, the declared tools (natively or in
// the prompt), the call options, the per-call Timeout, the Observer, the
// spending cap (Budget, each member at its own price), several samples
// per request (SamplesPerCall) and, for a structured run, the answer
// schema (nil otherwise). Errors: those of the tool declaration.
func (s *Solver) newAgent(schema json.RawMessage) (*microagent, error) {
	native, toolText, _, err := s.declaration()
	if err != nil {
		return nil, err
	}
	ms := members(s.Model)
	a := &microagent{
		model: s.Model, maxTokens: s.maxTokens(), temperature: s.temperature(),
		tools: native, toolText: toolText, options: s.CallOptions, timeout: s.Timeout,
		schema: schema, observer: s.Observer,
		budget: s.Budget, price: func(i int) Price { return s.priceOf(ms, i%len(ms)) },
	}
	a.fixed = a.fixedOptions()
	if per := s.samplesPerCall(len(ms)); per > 1 {
		a.perCall = &perCall{limit: per, onShort: func(got, asked int) {
			s.logger().Warn("the model returned fewer choices than asked: one sample per request from now on", "asked", asked, "got", got)
		}}
	}
	return a, nil
}

// withModel returns a copy of a that draws from m instead, every other
// setting kept, each of m's members priced as the Solver prices it (its
// own Price if Priced): the agent of an escalated race (EscalateModel).
// It draws one sample a request: an escalated race's indices follow the
// first race's, so none falls in the wave Race launches it with (see
// chunk), and an Ensemble's members are asked in turn by index.
func (a *microagent) withModel(s *Solver, m llms.Model) *microagent {
	b := *a
	b.model = m
	ms := members(m)
	b.price = func(i int) Price { return s.priceOf(ms, i%len(ms)) }
	b.perCall = nil
	return &b
}
