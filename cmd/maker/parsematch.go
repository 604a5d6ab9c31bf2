package main

import (
	"github.com/mdap-go/mdap/categories"
	"github.com/mdap-go/mdap/executor"
	"github.com/mdap-go/mdap/executor/fstools"
	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/inspect"
)

// runSolver is the solver whose judgement maker parse shows: the reply
// cap, and with tools (a spec's run always has them) the executor such a
// run has by default (the file tools with the read-only categories),
// whose Normalize puts a tool intent's arguments in the form its schema
// wants before the key is taken; without, none (a library run with no
// Executor). Nothing runs: the executor is rooted at the working folder
// and only normalises. Close it with closeSolver.
func runSolver(maxTokens int, tools bool) (*maker.Solver, error) {
	s := &maker.Solver{Config: maker.Config{MaxTokens: maxTokens}}
	if !tools {
		return s, nil
	}
	policy, err := parseTools("")
	if err != nil {
		return nil, err
	}
	ex, err := fstools.New(".", executor.WithTaxonomy(categories.Builtin()), executor.WithPolicy(policy))
	if err != nil {
		return nil, err
	}
	s.Executor = ex
	return s, nil
}

// closeSolver closes runSolver's executor, if any.
func closeSolver(s *maker.Solver) {
	if s.Executor != nil {
		s.Executor.Close()
	}
}

// keyAsRun gives each voting line of parse the key a run of task (nil:
// no spec) by solver votes it under: tool intents normalised by its
// executor, the spec's declared matchers grouping the replies, in the
// order given, as a race that tallied them in that order would.
func keyAsRun(solver *maker.Solver, task maker.Task, lines []parseLine) error {
	vs := make([]inspect.Verdict, len(lines))
	for i, l := range lines {
		vs[i] = l.Verdict
	}
	if err := inspect.ClassKeys(solver, task, vs); err != nil {
		return err
	}
	for i := range lines {
		lines[i].Verdict = vs[i]
	}
	return nil
}
