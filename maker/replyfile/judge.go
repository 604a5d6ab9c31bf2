package replyfile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/mdap-go/mdap/categories"
	"github.com/mdap-go/mdap/executor"
	"github.com/mdap-go/mdap/executor/fstools"
	"github.com/mdap-go/mdap/internal/words"
	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/inspect"
)

// ErrUnreadable marks a reply [Judge] could not read: bad input, which
// the caller names (a missing file, a FIFO, a reply over [MaxBytes]).
var ErrUnreadable = errors.New("reply not readable")

// unreadable is Load's error, marked [ErrUnreadable], its text Load's.
type unreadable struct{ err error }

func (e unreadable) Error() string   { return e.err.Error() }
func (e unreadable) Unwrap() []error { return []error{ErrUnreadable, e.err} }

// Verdict is one reply's verdict as `maker parse --json` prints it: the
// file it came from, the solver's [inspect.Verdict] and its token figures.
type Verdict struct {
	File string `json:"file"`
	inspect.Verdict
	OutputTokens int    `json:"output_tokens"`
	Estimated    bool   `json:"estimated,omitempty"`
	StopReason   string `json:"stop_reason,omitempty"`
}

// Judge reads every reply of names ([Load]: "-" is stdin) first, then
// judges each as a run of task (nil: no task, the replies' own form)
// with the reply cap maxTokens would: [JudgeWith] by the solver of
// [NewSolver], with tools when there is a task (a spec's run always has
// them).
//
// Errors: a reply that cannot be read wraps [ErrUnreadable] (its text is
// [Load]'s) and nothing is judged; others are [NewSolver]'s and
// [JudgeWith]'s. Cost: one parse, normalisation and key per reply.
func Judge(ctx context.Context, names []string, stdin io.Reader, task maker.Task, maxTokens int) ([]Verdict, error) {
	replies := make([]maker.Reply, len(names))
	for i, name := range names {
		r, err := Load(name, stdin)
		if err != nil {
			return nil, unreadable{err}
		}
		replies[i] = r
	}
	s, err := NewSolver(maxTokens, task != nil)
	if err != nil {
		return nil, err
	}
	if s.Executor != nil {
		defer s.Executor.Close()
	}
	return JudgeWith(ctx, s, task, names, replies)
}

// NewSolver is the solver whose judgement [Judge] gives: the reply cap
// maxTokens, and with tools the executor a run has by default (the file
// tools with the read-only categories), whose Normalize puts a tool
// intent's arguments in the form its schema wants before the key is
// taken; without, none (a library run with no Executor). Nothing runs: the
// executor is rooted at the working folder and only normalises. The
// caller closes s.Executor when it is not nil.
//
// Errors: the executor's, when it cannot be built.
func NewSolver(maxTokens int, tools bool) (*maker.Solver, error) {
	s := &maker.Solver{Config: maker.Config{MaxTokens: maxTokens}}
	if !tools {
		return s, nil
	}
	var err error
	if s.Executor, err = fstools.New(".", executor.WithTaxonomy(categories.Builtin()), executor.WithPolicy(categories.DefaultPolicy())); err != nil {
		return nil, err
	}
	return s, nil
}

// JudgeWith judges replies (named by names, in the same order) as s's
// run of task (nil: none) would: each reply's red flag or key
// ([inspect.In]), then the key each voting reply counts
// under, the task's declared matchers grouping the replies in the order
// given as a race that tallied them in that order would
// ([inspect.ClassKeys]).
//
// Errors: ClassKeys'. Cost: one parse, normalisation and key per reply.
func JudgeWith(ctx context.Context, s *maker.Solver, task maker.Task, names []string, replies []maker.Reply) ([]Verdict, error) {
	vs := make([]inspect.Verdict, len(replies))
	for i, r := range replies {
		vs[i] = inspect.In(s, task, r)
	}
	if err := inspect.ClassKeys(ctx, s, task, vs); err != nil {
		return nil, err
	}
	out := make([]Verdict, len(replies))
	for i, r := range replies {
		out[i] = Verdict{File: names[i], Verdict: vs[i], OutputTokens: r.OutputTokens, Estimated: r.Estimated, StopReason: r.StopReason}
	}
	return out, nil
}

// WriteText writes verdicts for a person, one line each (a red flag with
// its reason and the cap maxTokens, or the key and canonical form), then,
// for two replies or more, which of them vote together and a count of
// distinct answers and red flags. Write errors are the writer's to keep.
func WriteText(w io.Writer, verdicts []Verdict, maxTokens int) {
	var keys []string
	groups := map[string][]string{}
	flagged := 0
	for _, l := range verdicts {
		tokens := fmt.Sprintf("%d tokens", l.OutputTokens)
		if l.Estimated {
			tokens = "~" + tokens
		}
		if l.Flag != "" {
			flagged++
			fmt.Fprintf(w, "%s: red flag %q (%s, cap %d): %s\n", l.File, l.Flag, tokens, maxTokens, l.Reason)
			continue
		}
		fmt.Fprintf(w, "%s: key %s (%s): %s\n", l.File, l.Key, tokens, l.Canonical)
		if _, ok := groups[l.Key]; !ok {
			keys = append(keys, l.Key)
		}
		groups[l.Key] = append(groups[l.Key], l.File)
	}
	if len(verdicts) < 2 {
		return
	}
	for _, k := range keys {
		if files := groups[k]; len(files) > 1 {
			fmt.Fprintf(w, "vote together (key %s): %s\n", k, strings.Join(files, ", "))
		}
	}
	fmt.Fprintf(w, "%d replies: %s, %d red-flagged\n", len(verdicts), words.Plural(len(keys), "distinct answer"), flagged)
}
