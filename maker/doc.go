// Package maker is the orchestrator: a [Task], microagents over an
// llms.Model, and the [Solver] step loop that votes on every step, runs the
// winning tool intent through the executor, feeds its observation into the
// next prompt and journals each decided step so a run survives a crash.
package maker
