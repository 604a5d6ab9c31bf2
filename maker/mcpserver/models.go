package mcpserver

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mdap-go/mdap/executor"
	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/journal"
	"github.com/mdap-go/mdap/maker/models"
	_ "github.com/mdap-go/mdap/maker/models/all" // every provider a spec may name
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/mdap-go/mdap/vote"
	"github.com/tmc/langchaingo/llms"
)

// maxEnsemble bounds the models of one request's ensemble.
const maxEnsemble = 8

// maxTokensCap bounds a request's max_tokens.
const maxTokensCap = 1 << 20

// Sampling are the model and vote settings of a request that samples:
// sample_and_vote and run_task.
type Sampling struct {
	Models       []string  `json:"models,omitempty" jsonschema:"the model specs to sample from, each one the server allows (sim, openai:MODEL, ollama:MODEL, anthropic:MODEL); several make an ensemble, sample i going to model i mod n; default the server's first model"`
	BaseURL      string    `json:"base_url,omitempty" jsonschema:"the server the openai: and ollama: models call; only the server's own unless its operator allowed any (--allow-any-model)"`
	Temperatures []float64 `json:"temperatures,omitempty" jsonschema:"the temperature schedule: sample i is drawn at temperatures[min(i, len-1)]; default [0, 0.1], the paper's"`
	MaxTokens    int       `json:"max_tokens,omitempty" jsonschema:"the reply cap in tokens; a longer reply is red-flagged (default 750)"`
	K            int       `json:"k,omitempty" jsonschema:"the margin: an answer wins when it leads every other by k valid votes (default 3)"`
	Parallel     int       `json:"parallel,omitempty" jsonschema:"the most samples in flight at once, 1 to k (default k); results do not depend on it"`
	MaxSamples   int       `json:"max_samples,omitempty" jsonschema:"valid plus red-flagged samples one race may draw before it is undecided (default 100 k, at most the server's cap)"`
	MaxErrors    *int      `json:"max_errors,omitempty" jsonschema:"failed model calls one race tolerates; 0 tolerates none, the first failed call ends the race (default 10)"`
}

// settings are a checked Sampling.
type settings struct {
	models      []string
	baseURL     string
	foreignURL  bool // a base URL the operator did not name: no API key goes to it
	temperature func(int) float64
	maxTokens   int
	vote        vote.Config
}

// check validates a request's settings against the server's bounds and
// allowed models. Errors wrap ErrArgument or ErrModelNotAllowed.
func (s *Server) check(in Sampling) (settings, error) {
	st := settings{models: in.Models, baseURL: s.cfg.BaseURL, maxTokens: or(in.MaxTokens, maker.DefaultMaxTokens)}
	if len(st.models) == 0 {
		st.models = s.cfg.Models[:1]
	}
	if len(st.models) > maxEnsemble {
		return st, fmt.Errorf("%w: models: %d models; an ensemble takes at most %d", ErrArgument, len(st.models), maxEnsemble)
	}
	for _, m := range st.models {
		if err := models.CheckSpec(m); err != nil {
			return st, fmt.Errorf("%w: models: %w", ErrArgument, err)
		}
		if slices.Contains(s.cfg.Models, m) {
			continue
		}
		if !s.cfg.AllowAnyModel {
			return st, fmt.Errorf("%w: %q is not one of this server's models (%s); its operator adds models with --model", ErrModelNotAllowed, m, joinQuoted(s.cfg.Models))
		}
		// A spec's own endpoint (;base=URL, ;key=VAR) would send a key
		// of the server's environment, any variable the client names,
		// to a server the client names: only the operator's specs
		// carry one.
		if strings.Contains(m, ";") {
			return st, fmt.Errorf("%w: models: %q: ;base=, ;key=, ;rpm= and ;inflight= are the operator's settings (its --model specs); name the model alone, and its server with base_url", ErrModelNotAllowed, m)
		}
	}
	if in.BaseURL != "" && in.BaseURL != s.cfg.BaseURL {
		if !s.cfg.AllowAnyModel {
			return st, fmt.Errorf("%w: base_url %q: this server calls only its own model server; its operator can allow others with --allow-any-model", ErrModelNotAllowed, models.ShownURL(in.BaseURL))
		}
		if err := models.CheckBaseURL("", in.BaseURL); err != nil {
			return st, fmt.Errorf("%w: base_url %w", ErrArgument, err)
		}
		st.baseURL, st.foreignURL = in.BaseURL, true
	}
	if st.maxTokens < 1 || st.maxTokens > maxTokensCap {
		return st, fmt.Errorf("%w: max_tokens %d: use 1 to %d", ErrArgument, in.MaxTokens, maxTokensCap)
	}
	for i, t := range in.Temperatures {
		if !(t >= 0 && t <= 2) {
			return st, fmt.Errorf("%w: temperatures[%d] = %v: use 0 to 2", ErrArgument, i, t)
		}
	}
	st.temperature = maker.DefaultTemperature
	if temps := slices.Clone(in.Temperatures); len(temps) > 0 {
		st.temperature = func(i int) float64 { return temps[min(i, len(temps)-1)] }
	}
	k := or(in.K, vote.DefaultK)
	switch {
	case k < 1 || k > s.cfg.MaxK:
		return st, fmt.Errorf("%w: k %d: use 1 to %d", ErrArgument, in.K, s.cfg.MaxK)
	case in.Parallel < 0 || in.Parallel > k:
		return st, fmt.Errorf("%w: parallel %d: use 1 to k (%d), or leave it out for k", ErrArgument, in.Parallel, k)
	case in.MaxErrors != nil && (*in.MaxErrors < 0 || *in.MaxErrors > s.cfg.MaxSamples):
		return st, fmt.Errorf("%w: max_errors %d: use 0 (none) to %d, or leave it out for %d", ErrArgument, *in.MaxErrors, s.cfg.MaxSamples, vote.DefaultMaxErrors)
	}
	// vote.Config reads 0 as its default; the argument's 0 is none.
	maxErrors := 0
	if in.MaxErrors != nil {
		maxErrors = *in.MaxErrors
		if maxErrors == 0 {
			maxErrors = vote.NoErrors
		}
	}
	maxSamples := in.MaxSamples
	if maxSamples == 0 {
		maxSamples = min(vote.DefaultSamplesPerK*k, s.cfg.MaxSamples)
	}
	if maxSamples < k || maxSamples > s.cfg.MaxSamples {
		return st, fmt.Errorf("%w: max_samples %d: use k (%d) to %d, this server's cap on one race", ErrArgument, in.MaxSamples, k, s.cfg.MaxSamples)
	}
	st.vote = vote.Config{K: k, Parallel: in.Parallel, MaxSamples: maxSamples, MaxErrors: maxErrors}
	if _, err := st.vote.WithDefaults(); err != nil {
		return st, fmt.Errorf("%w: %w", ErrArgument, err)
	}
	return st, nil
}

// open builds the request's model: one model, or an ensemble. oracle is
// what the simulated model answers from; nil means the simulated model
// cannot serve this request, and why says so.
func (s *Server) open(st settings, oracle sim.Oracle, why string) (llms.Model, error) {
	ms := make([]llms.Model, 0, len(st.models))
	for _, name := range st.models {
		if name == "sim" && oracle == nil {
			return nil, fmt.Errorf("%w: the simulated model (sim) %s", ErrArgument, why)
		}
		o := models.Options{BaseURL: st.baseURL, Timeout: s.cfg.Timeout, Sim: func() (llms.Model, error) {
			return sim.New(oracle, s.cfg.Sim)
		}}
		if st.foreignURL {
			// The environment's keys are for the operator's servers.
			o.APIKey = "placeholder"
		}
		m, err := models.Open(name, o)
		if err != nil {
			return nil, fmt.Errorf("%w: models: %w", ErrArgument, err)
		}
		ms = append(ms, m)
	}
	if len(ms) == 1 {
		return ms[0], nil
	}
	return maker.NewEnsemble(ms...)
}

// solver is the Solver of a request's samples, for every tool that draws
// them (sample_and_vote through a Sampler, run_task through Solve), so
// both send the same calls for the same settings: the request's model,
// margin, reply cap and temperatures, the declared tools as the server's
// ToolDeclaration says, and the server's Logger and Observer. A run adds
// what only a run has (run non-nil): its executor, journal, step bound and
// progress.
func (s *Server) solver(st settings, model llms.Model, tools []llms.Tool, run *runParts) *maker.Solver {
	cfg := maker.Config{Vote: st.vote, MaxTokens: st.maxTokens, Temperature: st.temperature, ToolDeclaration: s.cfg.ToolDeclaration}
	if run == nil {
		run = &runParts{}
	} else {
		cfg.RerunPending, cfg.MaxSteps = run.rerunPending, s.cfg.MaxSteps
	}
	return &maker.Solver{
		Config:   cfg,
		Model:    model,
		Tools:    tools,
		Executor: run.executor,
		Journal:  run.journal,
		Progress: run.progress,
		Logger:   s.log,
		Observer: s.cfg.Observer,
	}
}

// runParts are what run_task's Solver has beyond a sampler's.
type runParts struct {
	executor     *executor.Executor
	journal      *journal.Journal
	rerunPending bool
	progress     func(maker.Event)
}
