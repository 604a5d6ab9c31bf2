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
//	r := &batch.Runner{Build: b.Build, Concurrency: 4, Limits: limits,
//		Results: store, Done: store.Done, Journal: store.Journal}
//	sum, err := r.Run(ctx, jobs)
package batch
