package maker

import (
	"context"

	"github.com/mdap-go/mdap/intent"
	"github.com/mdap-go/mdap/vote"
	"github.com/tmc/langchaingo/llms"
)

// Synchronous is an optional llms.Model extension for a model that
// answers on the calling goroutine without waiting on anything: no
// network, no sleep, no lock another call holds for long (the simulated
// model without latency, a cache, a replay). The solver then draws a
// step's samples one after another on its own goroutine (vote.RaceInline)
// instead of handing each to a worker, which costs more than such a
// sample: the decisions are the same (samples are tallied in index order
// whatever the schedule, see vote.Race), only Rounds and, with
// Vote.Speculate, the samples launched past the decision differ. It
// does the same for Vote.Parallel = 1 with any model, since that draws one
// sample at a time anyway. A model that reports true but blocks makes a
// step as slow as its samples added up; one that calls runtime.Goexit
// ends Solve's goroutine.
type Synchronous interface {
	// Synchronous reports whether calls answer without waiting. It must
	// not change during a run.
	Synchronous() bool
}

// Synchronous implements Synchronous: an ensemble answers without waiting
// when every member does.
func (e *Ensemble) Synchronous() bool {
	for _, m := range e.members {
		if s, ok := m.(Synchronous); !ok || !s.Synchronous() {
			return false
		}
	}
	return true
}

// raceFor returns the race a step of model under cfg runs: vote.RaceInline
// for one sample at a time, or for a Synchronous model unless its waves
// are served several samples per request (batched: a wave is then one
// request, which only Race's waves give); else vote.Race.
func raceFor(model llms.Model, cfg vote.Config, batched bool) func(ctx context.Context, cfg vote.Config, draw vote.Drawer[intent.Output]) (vote.Result[intent.Output], error) {
	if cfg.Parallel == 1 {
		return vote.RaceInline[intent.Output]
	}
	if s, ok := model.(Synchronous); ok && s.Synchronous() && !batched {
		return vote.RaceInline[intent.Output]
	}
	return vote.Race[intent.Output]
}
