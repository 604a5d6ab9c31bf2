// Package maker is the orchestrator of the MAKER method: it drives a
// many-step [Task] through stateless microagents, one model call per
// sample, votes on every step first-to-ahead-by-k, throws away suspect
// replies (red flags), runs the winning tool call through a
// permission-checked executor, and journals each decided step so a run
// survives a crash.
//
// # The task lifecycle
//
// A [Task] is a state machine the [Solver] advances one decided step at a
// time. For each step:
//
//  1. Task.Prompt(last) builds the step's messages from the task's current
//     state and the last tool result (nil when the last winner proposed no
//     tool call). This is all a microagent ever sees: it is stateless.
//  2. The solver draws samples: one llms.Model call each, the first at
//     temperature 0 and the rest at 0.1 (DefaultTemperature), the reply
//     capped at MaxTokens. Each reply is judged: empty, over the cap or cut
//     off is a red flag; otherwise Task.Decode turns it into an
//     intent.Output (an answer, a tool intent, or both) or a red flag; an
//     Output votes for its intent.Key. Red-flagged and failed samples never
//     vote ([Inspect] shows the verdict on one reply).
//  3. vote.Race decides: the first key k votes ahead of every other wins;
//     samples still in flight are cancelled. A spent budget fails the step
//     (vote.ErrUndecided); nothing is ever picked silently.
//  4. If the winner carries a tool intent, the executor runs it, if its
//     tool is registered, its category allowed and its arguments valid;
//     otherwise the denial is the observation. A call with side effects is
//     journaled as pending first.
//  5. Task.Apply(winner, observation) advances the task and says whether it
//     is done. The step is journaled (buffered, written with the
//     periodic sync, and always before a side-effect call runs).
//
// Task's documentation says which goroutine calls each method, and why
// Apply must be deterministic.
//
// # The langchaingo types in the API
//
// mdap speaks langchaingo (github.com/tmc/langchaingo), so every provider
// langchaingo has works unchanged: a model is an llms.Model, a prompt is
// []llms.MessageContent, tools are declared as []llms.Tool, and a reply's
// native tool calls are llms.ToolCall. Package maker/models opens the
// providers mdap knows from a spec such as "openai:gpt-4o-mini". To write
// a model of your own, a test double or a wrapper, a [ModelFunc] is
// enough: it supplies the single-prompt Call method langchaingo also asks
// for, and [TextResponse] builds a reply.
//
// # Journals, settings and models
//
// With a journal (package maker/journal) a run records each decided step,
// and a resume replays it: see journal.Journal for what a crash may lose,
// and [Settings] for what a resume must share with the run it continues.
// The solver puts each sample's identity (step, index) in its call's
// context ([SampleIDFrom]), so a model can make its answer a function of
// the sample rather than of timing; an [Ensemble] spreads a step's samples
// over several models.
//
// # A minimal run
//
// A [Solver] is a [Config] (the paper's setting when zero) and what runs
// it, built whole:
//
//	s := &maker.Solver{Config: maker.Config{Vote: vote.Config{K: 3}}, Model: model}
//	report, err := s.Solve(ctx, task)
//
// See ExampleSolver_Solve for a whole custom task, ExampleSolver_Solve_journal for a
// crash and resume, and the examples of packages maker/sim and maker/spec
// for the simulated model under a custom task and a task from a JSON file.
package maker
