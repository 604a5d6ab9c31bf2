// Package batch runs many tasks: a tasks file of JSON lines (ReadJobs),
// a Runner that solves its jobs a few at a time with an errgroup, shared
// provider limits that every task's model calls go through (Limits: calls
// in flight, requests per minute, a shared cooldown after a rate-limit
// answer), and results as JSON lines in a Store that a crashed or
// interrupted batch resumes from: finished tasks are skipped, unfinished
// ones resume from their journals.
//
// Library users plug their own tasks with a Builder; Builtin is the one
// `maker solve` uses, for Towers of Hanoi and spec tasks.
//
//	jobs, err := batch.ReadJobsFile("tasks.jsonl")
//	store, err := batch.OpenStore("results.jsonl", "state")
//	defer store.Close()
//	limits, err := batch.NewLimits(batch.LimitConfig{MaxInFlight: 8, RPM: 600})
//	builder := &batch.Builtin{Model: ...}
//	r := &batch.Runner{Build: builder.Build, Concurrency: 4, Limits: limits, Store: store}
//	sum, err := r.Run(ctx, jobs) // ctx.Err() when interrupted: run again to resume
package batch
