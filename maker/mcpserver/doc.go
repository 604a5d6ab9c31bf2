// Package mcpserver serves mdap over the Model Context Protocol, so that
// coding agents and IDEs (Claude Code, Cursor, Codex, ...) can call it as
// tools, over stdio or streamable HTTP, through the official Go SDK
// (github.com/modelcontextprotocol/go-sdk).
//
// # Tools
//
//   - vote: a client that samples on its own sends its replies; each is
//     judged as the solver judges a sample (inspect.Reply: red flag, or
//     canonical form and key) and the replies are tallied in order,
//     first-to-ahead-by-k as vote.Race does: the decision, or "undecided"
//     and how many more votes the leader needs at the least.
//   - sample_and_vote: the server samples one prompt through its own
//     model(s) until a reply leads by k (vote.Race), with a progress
//     notification per sample.
//   - run_task: a spec task (package maker/spec), inline or from a file
//     under the root, solved step by step with a journal in the state
//     folder; a progress notification per step; a cancelled run resumes
//     from its journal with resume: true.
//   - kmin: the scaling laws (laws.KMin and friends), as `maker kmin`.
//   - solve_problem: a long multiplication or a list sort solved by voted
//     decomposition (maker/problems), journaled in the state folder,
//     bounded by MaxSteps decisions; resumable with resume: true.
//   - parse: one reply's red flag, or its canonical form and key.
//
// Every tool has an input and an output JSON Schema derived from its Go
// types (VoteInput, VoteOutput, ...). Bad arguments, refused paths and
// models, failed runs and even a panicking handler come back as tool
// errors (a result with IsError set and a plain-language message a model
// can read); the server keeps serving.
//
// # Safety
//
// A request cannot widen what the operator configured: it may use only the
// models of Config.Models (unless Config.AllowAnyModel), its spec path and
// the file tools of its task stay inside Config.Root, its journal is a
// plain file name inside Config.State, the tool policy is Config.Policy
// (read-only by default), and k, samples, candidates and messages are
// bounded. Over HTTP the server listens on loopback unless the operator
// allows otherwise (ListenAddr), requires a bearer token unless told
// NoAuth (compared in constant time, from the headers, before a body is
// read), bounds headers (16 KiB) and request bodies, and caps sessions per
// client so that no client locks another out (HTTPOptions).
//
// No secret the server's models may send (credentials.Of: the
// environment's OPENAI_API_KEY and ANTHROPIC_API_KEY, each Config.Models
// spec's ;key=VAR, the password of Config.BaseURL, of a ;base= and of the
// environment's server URLs) reaches a client,
// even when a model server echoes it in an error: every form of it, as it
// is and JSON-escaped, is replaced by [REDACTED] in a tool result's text,
// structured output (each JSON string, decoded, so it stays valid JSON)
// and protocol error, and in each progress notification's message (see
// docs/observe.md).
package mcpserver
