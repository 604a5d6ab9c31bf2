package decompose

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/mdap-go/mdap/intent"
	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/vote"
	"github.com/tmc/langchaingo/llms"
	"golang.org/x/sync/errgroup"
)

// vote decides one prompt's answer for role r at node path: through a
// maker.Solver over a one-step task (first-to-ahead-by-k, red flags,
// escalation) for StrategyAhead, first-to-K on keys for StrategyFirstToK.
func (e *engine) vote(ctx context.Context, path string, r Role, msgs []llms.MessageContent, decode decoder) (decided, error) {
	model, salt := e.model(path, r)
	if e.s.Strategy == StrategyFirstToK {
		k := e.plan.K[r]
		cfg := e.solverConfig(r)
		i, draws, err := firstToK(ctx, k, e.maxSamples(r), func(ctx context.Context, i int) drawn {
			return drawOne(ctx, cfg, e.models[r], salt, i, msgs, decode)
		}, func(d drawn) (uint64, error) { return intent.Key(d.out) })
		if err != nil {
			return decided{samples: len(draws), cost: e.cost(r, draws)}, err
		}
		v, err := outputJSON(draws[i].out)
		return decided{value: v, samples: len(draws), cost: e.cost(r, draws)}, err
	}
	task := &oneStep{fingerprint: path + "/" + string(r), msgs: msgs, decode: decode}
	s := &maker.Solver{Config: e.solverConfig(r), Model: model}
	if r == RoleSolve && e.exec != nil {
		task.tools = true
		s.Executor, s.Tools = e.exec, e.tools
		s.MaxSteps = 1 + e.s.ToolSteps
	}
	rep, err := s.Solve(ctx, task)
	if err != nil {
		return decided{samples: rep.Launched, cost: rep.Cost}, err
	}
	v, err := outputJSON(task.winner)
	return decided{value: v, samples: rep.Launched, cost: rep.Cost}, err
}

// maxSamples is a role's sample budget per decision.
func (e *engine) maxSamples(r Role) int {
	c, err := e.solverConfig(r).Vote.WithDefaults()
	if err != nil { // Settings.withDefaults checked it
		return vote.DefaultSamplesPerK * e.plan.K[r]
	}
	return c.MaxSamples
}

// cost prices role r's draws at its price.
func (e *engine) cost(r Role, draws []drawn) float64 {
	var u vote.Usage
	for _, d := range draws {
		u.Add(d.usage)
	}
	return e.price(r).Cost(u)
}

// candidates samples the decomposer for a discriminators' vote: 2k−1
// samples (k the decomposer's), again while none is valid, within the
// sample budget. StrategyAhead keeps the distinct valid proposals in
// sample order; StrategyFirstToK keeps every valid one, as the authors
// do. The value is the list of proposals.
func (e *engine) candidates(ctx context.Context, path string, msgs []llms.MessageContent, decode decoder) (decided, error) {
	k := e.plan.K[RoleDecompose]
	wave, budget := 2*k-1, e.maxSamples(RoleDecompose)
	cfg := e.solverConfig(RoleDecompose)
	_, salt := e.model(path, RoleDecompose)
	var draws []drawn
	var list []json.RawMessage
	seen := map[string]bool{}
	spent := func() decided { return decided{samples: len(draws), cost: e.cost(RoleDecompose, draws)} }
	for len(list) == 0 {
		if len(draws) >= budget {
			return spent(), fmt.Errorf("%w: no valid proposal in %d samples", vote.ErrUndecided, len(draws))
		}
		n := min(wave, budget-len(draws))
		got, err := drawWave(ctx, len(draws), n, func(ctx context.Context, i int) drawn {
			return drawOne(ctx, cfg, e.models[RoleDecompose], salt, i, msgs, decode)
		})
		draws = append(draws, got...)
		if err != nil {
			return spent(), err
		}
		for _, d := range got {
			if d.err != nil || d.flag != nil {
				continue
			}
			v, err := outputJSON(d.out)
			if err != nil {
				return spent(), err
			}
			if e.s.Strategy == StrategyAhead && seen[string(v)] {
				continue
			}
			seen[string(v)] = true
			list = append(list, v)
		}
	}
	v, err := json.Marshal(list)
	return decided{value: v, samples: len(draws), cost: e.cost(RoleDecompose, draws)}, err
}

// pick decides among the candidates: StrategyAhead races the picked
// candidate's identity first-to-ahead-by-k, each vote shown the
// candidates in its own shuffled order (per seed, node, sample);
// StrategyFirstToK votes an index first-to-K, the order fixed. The value
// is the picked proposal.
func (e *engine) pick(ctx context.Context, path string, input json.RawMessage, list []Proposal) (decided, error) {
	keys := make([]uint64, len(list))
	for i, p := range list {
		k, err := proposalKey(p)
		if err != nil {
			return decided{}, err
		}
		keys[i] = k
	}
	model, salt := e.model(path, RoleDiscriminate)
	cfg := e.solverConfig(RoleDiscriminate)
	prompts := e.fam.Prompts()
	shown := func(i int) []int {
		order := make([]int, len(list))
		for j := range order {
			order[j] = j
		}
		if e.s.Strategy == StrategyAhead {
			rng := rand.New(rand.NewPCG(e.s.Seed, uint64(salt)<<20^uint64(i)))
			rng.Shuffle(len(order), func(a, b int) { order[a], order[b] = order[b], order[a] })
		}
		return order
	}
	draw := func(ctx context.Context, i int) drawn {
		order := shown(i)
		view := View{Family: e.fam.Name(), Problem: input, Candidates: make([]Proposal, len(list))}
		for j, o := range order {
			view.Candidates[j] = list[o]
		}
		msgs := Messages(prompts, RoleDiscriminate, view)
		var picked int
		d := drawOne(ctx, cfg, model, 0, i, msgs, func(r maker.Reply) (intent.Output, error) {
			n, err := DecodePick(r, len(list))
			if err != nil {
				return intent.Output{}, err
			}
			picked = order[n-1]
			return intent.Output{Value: n}, nil
		})
		d.out = intent.Output{Value: picked}
		return d
	}
	var chosen int
	var samples int
	var cost float64
	if e.s.Strategy == StrategyFirstToK {
		i, draws, err := firstToK(ctx, e.plan.K[RoleDiscriminate], e.maxSamples(RoleDiscriminate), draw,
			func(d drawn) (uint64, error) { return uint64(d.out.Value.(int)) + 1, nil })
		if err != nil {
			return decided{samples: len(draws), cost: e.cost(RoleDiscriminate, draws)}, err
		}
		chosen, samples, cost = draws[i].out.Value.(int), len(draws), e.cost(RoleDiscriminate, draws)
	} else {
		res, err := vote.Race(ctx, cfg.Vote, func(ctx context.Context, i int) vote.Sample[int] {
			d := draw(ctx, i)
			s := vote.Sample[int]{Flag: d.flag, Err: d.err, Usage: d.usage}
			if d.flag == nil && d.err == nil {
				s.Value, s.Key = d.out.Value.(int), keys[d.out.Value.(int)]
			}
			return s
		})
		if err != nil {
			return decided{samples: res.Launched, cost: e.price(RoleDiscriminate).Cost(res.Usage)}, err
		}
		chosen, samples = res.Winner, res.Launched
		cost = e.price(RoleDiscriminate).Cost(res.Usage)
	}
	out, err := proposalOutput(list[chosen])
	if err != nil {
		return decided{}, err
	}
	v, err := outputJSON(out)
	return decided{value: v, samples: samples, cost: cost}, err
}

// drawWave draws samples first..first+n-1 concurrently; every draw has
// returned when it does.
func drawWave(ctx context.Context, first, n int, draw func(context.Context, int) drawn) ([]drawn, error) {
	got := make([]drawn, n)
	var g errgroup.Group
	for j := range n {
		g.Go(func() (err error) {
			defer func() {
				if v := recover(); v != nil {
					err = fmt.Errorf("%w: a draw: %v", ErrPanic, v)
				}
			}()
			got[j] = draw(ctx, first+j)
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return got, ctx.Err()
}

// firstToK draws in waves until one key has k valid votes (the authors'
// rule: first to K, not ahead by K), tallying in index order so the
// result is a function of the draws alone. It returns the index of the
// draw that reached k votes, and every draw made (a wave is drawn whole). Errors: vote.ErrUndecided after maxSamples valid plus
// flagged draws; vote.ErrTooManyErrors after more than
// vote.DefaultMaxErrors failed draws; ctx.Err().
func firstToK(ctx context.Context, k, maxSamples int, draw func(context.Context, int) drawn, key func(drawn) (uint64, error)) (int, []drawn, error) {
	counts := map[uint64]int{}
	var draws []drawn
	lead, counted, failed := 0, 0, 0
	for counted < maxSamples {
		n := min(k-lead, maxSamples-counted)
		got, err := drawWave(ctx, len(draws), n, draw)
		base := len(draws)
		draws = append(draws, got...) // a wave is paid for whole
		if err != nil {
			return 0, draws, err
		}
		for j, d := range got {
			switch {
			case d.err != nil:
				if failed++; failed > vote.DefaultMaxErrors {
					return 0, draws, errors.Join(vote.ErrTooManyErrors, d.err)
				}
				continue
			case d.flag != nil:
				counted++
				continue
			}
			counted++
			kk, err := key(d)
			if err != nil {
				return 0, draws, err
			}
			counts[kk]++
			lead = max(lead, counts[kk])
			if counts[kk] >= k {
				return base + j, draws, nil
			}
		}
	}
	return 0, draws, fmt.Errorf("%w: no answer reached %d votes in %d samples", vote.ErrUndecided, k, counted)
}
