package calibrate

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mdap-go/mdap/executor"
	"github.com/mdap-go/mdap/intent"
	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/mdap-go/mdap/maker/spec"
	"github.com/tmc/langchaingo/llms"
)

// Task is a task to calibrate on, opened: its Steps, the Oracle the
// simulated model answers its prompts from, the Tools a run of it
// declares, and Close, which releases what it holds (a spec's executor).
type Task struct {
	Steps  Steps
	Oracle sim.Oracle
	Tools  []llms.Tool
	Close  func() error
}

// OpenHanoi is Towers of Hanoi with n disks as a Task: Hanoi's steps,
// hanoi.Oracle, no tools. Errors: Hanoi's.
func OpenHanoi(n int) (Task, error) {
	steps, err := Hanoi(n)
	return Task{Steps: steps, Oracle: hanoi.Oracle{}, Close: func() error { return nil }}, err
}

// OpenSpec opens the spec file at path as a run opens it (spec.OpenFile:
// root is the folder granted its file tools, "" for the file's own;
// tools the tool policy's list) as a Task: its Steps (Spec), its script
// as the simulated model's Oracle, the tools it declares. Errors:
// spec.OpenFile's; then Spec's, the spec closed.
func OpenSpec(path, root, tools string) (Task, error) {
	o, err := spec.OpenFile(path, root, tools)
	if err != nil {
		return Task{}, err
	}
	steps, err := Spec(o.Spec, o.Executor)
	if err != nil {
		_ = o.Close()
		return Task{}, err
	}
	return Task{Steps: steps, Oracle: spec.Oracle{Spec: o.Spec}, Tools: o.Tools, Close: o.Close}, nil
}

// Steps is a task whose every step can be built on its own, with its
// correct answer: what calibration needs. A microagent is stateless, so a
// step asked out of order, in its true state, is the step a run would
// ask.
type Steps interface {
	// Total is the number of steps of the whole task: the run that k_min
	// is planned for.
	Total() int
	// Step builds step i, 0 <= i < Total(), in the state the correct
	// answers to steps 0..i-1 lead to. It is called from one goroutine,
	// once per sampled step.
	Step(ctx context.Context, i int) (Step, error)
}

// Step is one step, ready to sample.
type Step struct {
	// Messages are the step's prompt, as the task's Prompt gives it.
	Messages []llms.MessageContent
	// Decode is the task's Decode: it turns a reply into an answer or a
	// red flag. It must be safe for concurrent use.
	Decode func(maker.Reply) (intent.Output, error)
	// Correct is the step's correct answer; a valid sample is right when
	// its vote key is Correct's.
	Correct intent.Output
	// Schema is the task's answer schema (maker.StructuredTask), which a
	// Structured solver's calls carry as the run's do; nil for a task
	// without one.
	Schema json.RawMessage
}

// hanoiSteps are the steps of Towers of Hanoi with n disks.
type hanoiSteps struct {
	n    int
	task *hanoi.Task // for Decode, which reads only n
}

// Hanoi returns the steps of Towers of Hanoi with n disks, the paper's
// task: step i in the state after the first i moves of the solution, after
// the i-th move, with hanoi.CorrectAnswer as its answer. Building a step
// costs O(n), whatever i. Errors: those of hanoi.New.
func Hanoi(n int) (Steps, error) {
	t, err := hanoi.New(n)
	if err != nil {
		return nil, err
	}
	return hanoiSteps{n: n, task: t}, nil
}

func (h hanoiSteps) Total() int { return hanoi.TotalSteps(h.n) }

func (h hanoiSteps) Step(_ context.Context, i int) (Step, error) {
	if i < 0 || i >= h.Total() {
		return Step{}, fmt.Errorf("hanoi step %d of %d: out of range", i, h.Total())
	}
	s, prev := hanoiAt(h.n, i)
	a, err := hanoi.CorrectAnswer(s, prev)
	if err != nil { // unreachable: the solution's states always have a move
		return Step{}, err
	}
	return Step{Messages: hanoi.Messages(h.n, s, prev), Decode: h.task.Decode, Correct: intent.Output{Value: a.Value()}, Schema: h.task.AnswerSchema()}, nil
}

// hanoiAt returns the state after the first i moves of the n-disk solution
// (from peg 0 to peg 2) and the i-th move (nil for i = 0), in O(n): the
// largest disk of a tower of m moves once, at move 2^(m-1); before it the
// m-1 smaller disks go from the source to the spare peg, after it from
// the spare to the target.
func hanoiAt(n, i int) (hanoi.State, *hanoi.Move) {
	s := hanoi.State{{}, {}, {}}
	from, to, via := 0, 2, 1
	var prev *hanoi.Move
	for m := n; m >= 1; m-- {
		half := 1 << (m - 1)
		if i < half { // disk m has not moved: the smaller disks are on their way to via
			s[from] = append(s[from], m)
			to, via = via, to
			continue
		}
		if i == half { // disk m's move is the i-th
			prev = &hanoi.Move{Disk: m, From: from, To: to}
		}
		s[to] = append(s[to], m)
		i -= half
		from, via = via, from
	}
	return s, prev
}

// specSteps are the steps of a spec task's script.
type specSteps struct {
	spec     *spec.Spec
	ex       *executor.Executor
	decode   func(maker.Reply) (intent.Output, error)
	corrects []intent.Output
	// The walk along the script's trajectory: walker is a task in the
	// state before step len(at), at[i] step i as the run would ask it.
	walker *spec.Task
	last   *intent.Observation // the walker's last tool result
	at     []walked
}

// walked is a step on the script's trajectory: its prompt, made by the
// walking task itself from its state, the earlier tool results it keeps
// and the last one, so it is byte for byte the run's.
type walked struct {
	msgs []llms.MessageContent
}

// Spec returns the steps of a spec task's script (spec.Spec.Script): step
// i as a run that decided the script's replies to steps 0..i-1 would ask
// it. The steps are built by walking that trajectory with the task
// itself: each of the script's tool calls is run by ex as a run would run
// it (normalized, then executed under its policy: a denial is the
// observation), its result applied to the task, so step i's prompt holds
// what the run's would: the state, the last tool result and, with the
// spec's "observations" above one, the earlier ones. ex may be nil only
// for a script without tool calls. Total is the script's length; a step
// costs the tool calls of the steps before it not yet walked (each is run
// once, in order).
//
// Errors wrap ErrConfig: a spec without a script, a script reply its own
// contract refuses, a tool call in a script without an executor.
func Spec(sp *spec.Spec, ex *executor.Executor) (Steps, error) {
	if sp == nil || len(sp.Script) == 0 {
		return nil, fmt.Errorf("%w: the spec has no script: calibration needs each step's correct reply", ErrConfig)
	}
	task := spec.New(sp)
	st := &specSteps{spec: sp, ex: ex, decode: task.Decode, walker: task}
	for i, s := range sp.Script {
		out, err := task.Decode(maker.Reply{Text: string(s.Reply)})
		if err != nil {
			return nil, fmt.Errorf("%w: the script's reply to step %d is not a valid answer: %w", ErrConfig, i, err)
		}
		if out.Intent != nil && ex == nil {
			return nil, fmt.Errorf("%w: the script's step %d calls tool %s: give an executor to run it", ErrConfig, i, out.Intent.Tool)
		}
		st.corrects = append(st.corrects, out)
	}
	return st, nil
}

func (s *specSteps) Total() int { return len(s.spec.Script) }

func (s *specSteps) Step(ctx context.Context, i int) (Step, error) {
	if i < 0 || i >= s.Total() {
		return Step{}, fmt.Errorf("spec step %d of %d: out of range", i, s.Total())
	}
	if err := s.walk(ctx, i); err != nil {
		return Step{}, err
	}
	return Step{Messages: s.at[i].msgs, Decode: s.decode, Correct: s.corrects[i], Schema: s.walker.AnswerSchema()}, nil
}

// walk advances the walker along the script's trajectory until step i is
// in s.at: to reach step j it runs the script's tool call of step j-1,
// if any, and applies the script's reply with its result, as the run
// does with a winner, then records the task as step j's.
func (s *specSteps) walk(ctx context.Context, i int) error {
	for len(s.at) <= i {
		if j := len(s.at) - 1; j >= 0 {
			var obs *intent.Observation
			if ti := s.corrects[j].Intent; ti != nil {
				call := *ti
				if n, err := s.ex.Normalize(call); err == nil {
					call = n
				}
				o, err := s.ex.Execute(ctx, call)
				if err != nil {
					return fmt.Errorf("step %d: running the script's tool call of step %d (%s): %w", i, j, ti.Tool, err)
				}
				obs = &o
			}
			if _, err := s.walker.Apply(s.corrects[j], obs); err != nil {
				return fmt.Errorf("step %d: applying the script's reply to step %d: %w", i, j, err)
			}
			s.last = obs
		}
		s.at = append(s.at, walked{msgs: s.walker.Prompt(s.last)})
	}
	return nil
}
