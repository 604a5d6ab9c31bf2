// Package sim is the simulated model: an [llms.Model] that answers a
// built-in task's step prompts through an [Oracle] the task provides, with
// a configured accuracy, error mix, red-flag rate, provider-error rate and
// latency. It is the offline default of mdap, the engine of every benchmark
// and what `maker serve-sim` serves.
//
// # One call
//
// GenerateContent joins the text of the request's messages ([PromptText]),
// asks the oracle for the correct reply (an oracle error is
// [ErrUnknownPrompt]), then draws one uniform number u and reads it against
// the configured rates:
//
//	u < ErrorRate                      a provider error (ErrProvider)
//	u < ErrorRate + FlagRate           a red-flag reply: overlong, cut off or malformed
//	otherwise                          a valid reply: the correct one with probability P,
//	                                   else a wrong one from the wrong-answer mix
//
// With a DifficultySpread, P is the mean of the steps' own probabilities:
// each step draws its p once from a Beta distribution around P (see
// [Config.DifficultySpread]), so some steps are hard, as for a real model;
// HardAgree makes the errors of a hard step (p below 1/2) agree on one wrong
// answer, the failure that voting cannot outvote. The default is no spread.
//
// It sleeps the drawn latency (returning ctx.Err() if ctx ends first)
// before answering. Replies are text; the sim never returns native tool
// calls, so a task whose answer is a tool intent has its oracle write the
// intent as JSON text ({"tool_intent": {...}}), which every parser reads.
//
// # Determinism
//
// Every random decision of a call (provider error, red flag, correct or
// wrong, which wrong answer, which flag, the latency, the filler text) is
// drawn from its own math/rand/v2 PCG generator, seeded by a splitmix64
// hash of (Config.Seed, step, sample index, a hash of the prompt text) and
// the decision's fixed slot number; step and index come from
// Config.SampleID (the solver wires maker.SampleIDFrom into it). No
// generator is shared, so the reply to a sample depends only on what it
// is, never on the goroutine schedule, the order of calls or other
// samples. Because each decision has its own slot, changing one setting
// moves no other decision: with the same seed, a higher P only turns wrong
// replies into correct ones, and the latency never changes an answer.
// Mixing the prompt in keeps two tasks run with one seed from seeing the
// same random draws.
//
// Without a sample identity (SampleID unset or reporting !ok, as for a
// model served over HTTP) the call's index is the value of a per-model
// atomic call counter instead: still reproducible for a sequential client,
// but not schedule-independent under concurrent calls.
//
// # Usage and stop reasons
//
// Usage is reported as langchaingo's OpenAI provider does:
// ContentChoice.GenerationInfo holds int "PromptTokens", "CompletionTokens"
// and "TotalTokens", estimated as ceil(len(text)/4) bytes per token (never
// llms.CountTokens, which downloads files). StopReason is "stop", or
// "length" when a reply is cut off. GenerationInfo also holds "SimOutcome"
// ([InfoOutcome]), the sim's own record of what it meant to answer, for
// tests and benchmarks; solvers must not read it.
package sim
