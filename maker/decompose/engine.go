package decompose

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/mdap-go/mdap/executor"
	"github.com/mdap-go/mdap/internal/catch"
	"github.com/mdap-go/mdap/maker"
	"github.com/tmc/langchaingo/llms"
	"golang.org/x/sync/errgroup"
)

// ErrPanic: a family's method or a model panicked; the run fails with it
// instead of crashing its host.
var ErrPanic = errors.New("panic in a decomposition")

// Solve decomposes and solves the problem input of family fam as cfg
// says, and returns the root's answer with what it took.
//
// Guarantee: when every role decides right with probability at least its
// p in cfg.P, independently, the tree is right with probability at least
// cfg.Target (see Plan); errors that agree across samples (co-failure)
// are outside that promise, and a Result counts them when the models
// say (CoFailures). Results do not depend on concurrency or cfg.Parallel:
// every sample draws per (seed, node, role, index).
// With cfg.Journal (or cfg.JournalStore), every decision is written and
// synced before it is used, and a run killed at any point resumes from the journal to the same
// result, without deciding a journaled decision again.
//
// Cost: per decision, the race's samples (about k/(2p−1) model calls);
// decisions number up to Plan.Decisions; at most cfg.Parallel decisions in
// flight, siblings concurrently. Errors: ErrInput, ErrConfig (a
// *maker.FieldError), ErrPlan, ErrNoModel, ErrDecision (wrapping the
// vote's error, vote.ErrUndecided...), ErrPanic, the journal's
// (ErrJournalMismatch, ErrJournalCorrupt, ErrJournalLocked,
// ErrJournalKey), ctx.Err(). On an error after the run began, the Result
// holds what was decided so far (journaled decisions stay for a resume).
func Solve(ctx context.Context, fam Family, input json.RawMessage, cfg Config) (*Result, error) {
	storeOpened := false // from then on the journal owns cfg.JournalStore
	if st := cfg.JournalStore; st != nil {
		defer func() {
			if !storeOpened {
				st.Close()
			}
		}()
		if cfg.Journal != "" {
			return nil, fmt.Errorf("%w: Journal and JournalStore: give one", ErrConfig)
		}
	}
	canon, err := canon(fam, input)
	if err != nil {
		return nil, err
	}
	s, err := cfg.Settings.withDefaults(fam, canon)
	if err != nil {
		return nil, err
	}
	if err := cfg.checkTools(); err != nil {
		return nil, err
	}
	disc := s.discriminates(fam)
	pl, err := NewPlan(s.Caps, disc, s.P, s.Target)
	if err != nil {
		return nil, err
	}
	for r, k := range s.K {
		pl.K[r] = k
	}
	for _, r := range Roles {
		if _, used := pl.Bound[r]; used && cfg.Models[r] == nil {
			return nil, fmt.Errorf("%w: %s (set Config.Models[%q])", ErrNoModel, r, r)
		}
	}
	e := &engine{fam: fam, s: s, plan: pl, models: cfg.Models, truth: cfg.Truth, cofail: cfg.CoFailures,
		disc: disc, sem: make(chan struct{}, s.Parallel), log: cfg.Logger, exec: cfg.Executor, tools: cfg.Tools,
		res: &Result{Family: fam.Name(), Input: canon, Plan: pl, Roles: map[Role]*RoleStats{}}}
	for r := range pl.Bound {
		e.res.Roles[r] = &RoleStats{K: pl.K[r]}
	}
	if cfg.Journal != "" || cfg.JournalStore != nil {
		h := header{Family: fam.Name(), Input: canon, Fingerprint: fingerprint(fam, canon, s, pl, cfg.Models)}
		if cfg.JournalStore != nil {
			storeOpened = true // openJournalOn closes it on an error
			e.j, err = openJournalOn(storeLines{cfg.JournalStore}, h, cfg.JournalKey, cfg.JournalUnsigned)
		} else {
			e.j, err = openJournal(cfg.Journal, h, cfg.JournalKey, cfg.JournalUnsigned)
		}
		if err != nil {
			return nil, err
		}
		defer e.j.close()
	}
	start := time.Now()
	var ans json.RawMessage
	var crit time.Duration
	if rec := catch.Try(func() { ans, crit, err = e.node(ctx, "r", 0, canon) }); rec != nil {
		err = fmt.Errorf("%w at the root: %v", ErrPanic, rec.Value)
	}
	e.res.Wall, e.res.CriticalPath = time.Since(start), crit
	if err != nil {
		return e.res, err
	}
	e.res.Answer = ans
	if c, ok := fam.(Checker); ok {
		good, err := c.Check(canon, ans)
		if err != nil {
			return e.res, fmt.Errorf("checking the answer: %w", err)
		}
		e.res.Correct = &good
	}
	return e.res, nil
}

// canon is fam.Canon with its error as ErrInput, its panic as ErrPanic.
func canon(fam Family, input json.RawMessage) (c json.RawMessage, err error) {
	if rec := catch.Try(func() { c, err = fam.Canon(input) }); rec != nil {
		return nil, fmt.Errorf("%w: %s.Canon: %v", ErrPanic, fam.Name(), rec.Value)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrInput, fam.Name(), err)
	}
	return c, nil
}

// engine is one Solve call's state.
type engine struct {
	fam    Family
	s      Settings
	plan   Plan
	models map[Role]llms.Model
	truth  Truth
	cofail CoFailures
	disc   bool
	sem    chan struct{}
	j      *journal
	log    *slog.Logger
	exec   *executor.Executor
	tools  []llms.Tool

	mu  sync.Mutex
	res *Result
}

// node solves the problem input at path and depth: its answer, and the
// critical path of the decisions below it.
func (e *engine) node(ctx context.Context, path string, depth int, input json.RawMessage) (json.RawMessage, time.Duration, error) {
	e.mu.Lock()
	e.res.Nodes++
	e.res.Depth = max(e.res.Depth, depth)
	e.mu.Unlock()
	var crit time.Duration
	atomic := depth >= e.s.Caps.MaxDepth || e.fam.Indivisible(input)
	if !atomic {
		rec, err := e.atomic(ctx, path, input)
		if err != nil {
			return nil, 0, err
		}
		crit += time.Duration(rec.Wall)
		atomic = string(rec.Value) == "true"
	}
	if atomic {
		rec, err := e.answer(ctx, path, RoleSolve, View{Family: e.fam.Name(), Problem: input})
		if err != nil {
			return nil, 0, err
		}
		return rec.Value, crit + time.Duration(rec.Wall), nil
	}
	prop, took, err := e.propose(ctx, path, input)
	if err != nil {
		return nil, 0, err
	}
	crit += took
	answers := make([]json.RawMessage, len(prop.Subproblems))
	crits := make([]time.Duration, len(prop.Subproblems))
	g, gctx := errgroup.WithContext(ctx)
	for i, sub := range prop.Subproblems {
		g.Go(func() (err error) {
			if rec := catch.Try(func() {
				answers[i], crits[i], err = e.node(gctx, path+"."+strconv.Itoa(i), depth+1, sub)
			}); rec != nil {
				return fmt.Errorf("%w at node %s.%d: %v", ErrPanic, path, i, rec.Value)
			}
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, 0, err
	}
	crit += maxDuration(crits)
	rec, err := e.answer(ctx, path, RoleCompose, View{Family: e.fam.Name(), Problem: input, Composition: prop.Composition, Answers: answers})
	if err != nil {
		return nil, 0, err
	}
	return rec.Value, crit + time.Duration(rec.Wall), nil
}

func maxDuration(ds []time.Duration) time.Duration {
	var m time.Duration
	for _, d := range ds {
		m = max(m, d)
	}
	return m
}

// decided is what a vote returns: the decision's canonical value and
// what it took.
type decided struct {
	value   json.RawMessage
	samples int
	cost    float64
}

// decision returns the journaled decision (node, role, part), or makes it
// with run, judges it against right (nil: no truth), journals it (synced)
// and counts it, in that order: nothing is used before it is on disk.
func (e *engine) decision(ctx context.Context, node string, r Role, part string, right func() (json.RawMessage, error), run func(ctx context.Context) (decided, error)) (Record, error) {
	if e.j != nil {
		if rec, ok := e.j.lookup(node, r, part); ok {
			e.mu.Lock()
			e.res.add(rec, true)
			e.mu.Unlock()
			return rec, nil
		}
	}
	select {
	case e.sem <- struct{}{}:
	case <-ctx.Done():
		return Record{}, ctx.Err()
	}
	if err := ctx.Err(); err != nil { // a sibling failed while this one waited
		<-e.sem
		return Record{}, err
	}
	start := time.Now()
	var d decided
	var err error
	if rec := catch.Try(func() { d, err = run(ctx) }); rec != nil {
		err = fmt.Errorf("%w: %v", ErrPanic, rec.Value)
	}
	wall := time.Since(start)
	<-e.sem
	if err != nil {
		e.mu.Lock()
		e.res.failed(r, d.samples, d.cost)
		e.mu.Unlock()
		return Record{}, fmt.Errorf("%w: node %s, %s: %w", ErrDecision, node, r, err)
	}
	rec := Record{Node: node, Role: r, Part: part, Value: d.value, Samples: d.samples, Cost: d.cost, Wall: int64(wall)}
	if e.truth != nil && right != nil {
		var want json.RawMessage
		var terr error
		if p := catch.Try(func() { want, terr = right() }); p == nil && terr == nil && want != nil {
			rec.Wrong = !bytes.Equal(want, d.value)
		}
	}
	if e.cofail != nil {
		rec.CoFailed = e.cofail.CoFailed(r, node)
	}
	if e.j != nil {
		if err := e.j.record(rec); err != nil {
			return Record{}, err
		}
	}
	e.mu.Lock()
	e.res.add(rec, false)
	e.mu.Unlock()
	if e.log != nil {
		e.log.Debug("decided", "node", node, "role", r, "part", part, "value", string(d.value), "samples", d.samples, "wrong", rec.Wrong)
	}
	return rec, nil
}

// atomic decides whether the node is solved directly.
func (e *engine) atomic(ctx context.Context, path string, input json.RawMessage) (Record, error) {
	right := func() (json.RawMessage, error) { return json.Marshal(e.truth.Atomic(input)) }
	msgs := Messages(e.fam.Prompts(), RoleAtomic, View{Family: e.fam.Name(), Problem: input})
	return e.decision(ctx, path, RoleAtomic, "", right, func(ctx context.Context) (decided, error) {
		return e.vote(ctx, path, RoleAtomic, msgs, DecodeAtomic)
	})
}

// answer decides a solver's (v without Composition) or composer's answer.
func (e *engine) answer(ctx context.Context, path string, r Role, v View) (Record, error) {
	right := func() (json.RawMessage, error) {
		var a json.RawMessage
		var err error
		if r == RoleSolve {
			a, err = e.truth.Solve(v.Problem)
		} else {
			a, err = e.truth.Compose(v.Problem, v.Composition, v.Answers)
		}
		if err != nil {
			return nil, err
		}
		return e.fam.CanonAnswer(v.Problem, a)
	}
	msgs := Messages(e.fam.Prompts(), r, v)
	return e.decision(ctx, path, r, "", right, func(ctx context.Context) (decided, error) {
		return e.vote(ctx, path, r, msgs, decodeAnswer(e.fam, v.Problem))
	})
}

// propose decides the node's decomposition, and the time it took.
func (e *engine) propose(ctx context.Context, path string, input json.RawMessage) (Proposal, time.Duration, error) {
	right := func() (json.RawMessage, error) {
		p, err := e.truth.Split(input)
		if err != nil {
			return nil, err
		}
		return proposalJSON(e.fam, p)
	}
	msgs := Messages(e.fam.Prompts(), RoleDecompose, View{Family: e.fam.Name(), Problem: input})
	decode := decodeProposal(e.fam, e.s.Caps.MaxBreadth)
	if !e.disc {
		rec, err := e.decision(ctx, path, RoleDecompose, "", right, func(ctx context.Context) (decided, error) {
			return e.vote(ctx, path, RoleDecompose, msgs, decode)
		})
		if err != nil {
			return Proposal{}, 0, err
		}
		p, err := readProposal(rec.Value)
		return p, time.Duration(rec.Wall), err
	}
	// Candidates, then a discriminators' pick among them.
	among := func() (json.RawMessage, error) { return nil, nil } // judged below, against the pick's truth
	cands, err := e.decision(ctx, path, RoleDecompose, "candidates", among, func(ctx context.Context) (decided, error) {
		return e.candidates(ctx, path, msgs, decode)
	})
	if err != nil {
		return Proposal{}, 0, err
	}
	var list []Proposal
	if err := json.Unmarshal(cands.Value, &list); err != nil {
		return Proposal{}, 0, fmt.Errorf("%w: node %s: candidates: %w", ErrJournalCorrupt, path, err)
	}
	if len(list) == 1 && e.s.Strategy == StrategyAhead {
		return list[0], time.Duration(cands.Wall), nil
	}
	pick, err := e.decision(ctx, path, RoleDiscriminate, "", right, func(ctx context.Context) (decided, error) {
		return e.pick(ctx, path, input, list)
	})
	if err != nil {
		return Proposal{}, 0, err
	}
	p, err := readProposal(pick.Value)
	return p, time.Duration(cands.Wall + pick.Wall), err
}

// proposalJSON is the canonical JSON of p as decisions record it.
func proposalJSON(fam Family, p Proposal) (json.RawMessage, error) {
	for i, s := range p.Subproblems {
		c, err := fam.Canon(s)
		if err != nil {
			return nil, err
		}
		p.Subproblems[i] = c
	}
	p, err := canonProposal(p)
	if err != nil {
		return nil, err
	}
	out, err := proposalOutput(p)
	if err != nil {
		return nil, err
	}
	return outputJSON(out)
}

// readProposal reads a decided proposal back.
func readProposal(v json.RawMessage) (Proposal, error) {
	var p Proposal
	if err := json.Unmarshal(v, &p); err != nil {
		return Proposal{}, fmt.Errorf("%w: a proposal: %w", ErrJournalCorrupt, err)
	}
	return p, nil
}

// model is role r's model for node path.
func (e *engine) model(path string, r Role) (llms.Model, int) {
	salt := nodeSalt(path, r)
	return nodeModel{Model: e.models[r], salt: salt}, salt
}

// solverConfig is a role's race settings.
func (e *engine) solverConfig(r Role) maker.Config {
	c := e.s.Solver
	c.Vote.K = e.plan.K[r]
	c.MaxSteps = 1
	c.Price = e.price(r)
	return c
}

// price is role r's price: Settings.Prices[r], else its model's own
// (maker.Priced), else Solver.Price.
func (e *engine) price(r Role) maker.Price {
	return rolePrice(e.s, e.models, r)
}

func rolePrice(s Settings, models map[Role]llms.Model, r Role) maker.Price {
	if p, ok := s.Prices[r]; ok {
		return p
	}
	if p, ok := models[r].(maker.Priced); ok {
		return p.Price()
	}
	return s.Solver.Price
}
