// Package simserver is the OpenAI-compatible HTTP face of the simulated
// model (package maker/sim), with fault injection: any OpenAI client, or
// another implementation of the MAKER method, can be measured against the
// same error model as mdap's own runs. `maker serve-sim` serves it.
//
// # Endpoints
//
// GET /v1/models lists one model (Config.ModelName, "sim" by default).
// POST /v1/chat/completions answers a chat completion request: messages
// (string or text-part content; other parts are left out), max_tokens and
// max_completion_tokens (the latter wins), temperature (checked, then
// ignored, as the simulated model's draws do not depend on it), n (n
// choices), tools and tool_choice ("auto" or "none"), seed. Other fields
// are ignored; what the simulated model cannot honour is refused with a
// 400 naming the field: stream, a response_format other than text, a
// tool_choice that forces a call ("required" or a named function),
// logprobs and top_logprobs. Every response carries an X-Request-Id
// header unique to its request. The reply has OpenAI's shape: choices with finish_reason
// "stop", "length" (a reply cut at the cap) or "tool_calls", and usage
// (prompt_tokens, completion_tokens, total_tokens, estimated as the
// simulated model does: four bytes a token). Errors have OpenAI's shape,
// {"error": {"message", "type", "param", "code"}}: 400 for a bad request
// (the message names the field) or a prompt the oracle does not read, 404,
// 405, 413 for a body over Config.MaxBodyBytes (4 MiB by default), 500 for
// the simulated model's provider errors.
//
// # Tool calls
//
// When a request declares tools (and tool_choice is not "none"), a valid
// reply that is only a tool intent for a declared function, such as
// {"tool_intent": {"tool": "grep", "args": {"pattern": "x"}}}, comes back
// as a native tool call: message.tool_calls holds the function's name and
// its arguments as a JSON object text, content is null, finish_reason is
// "tool_calls". mdap's parser reads both forms as the same intent, so they
// vote together. Red-flag replies, answers and intents for undeclared
// tools stay text.
//
// # Which step, which sample
//
// A request carries no mdap-specific field. The server derives the
// sample's identity the simulated model draws from:
//
//   - step: a 64-bit FNV-1a hash of the prompt text (sim.PromptText of the
//     messages: their text parts joined by blank lines), so the prompt
//     itself names the step;
//   - sample index: the request's standard OpenAI "seed" field if it has
//     one; otherwise the number of earlier requests (more exactly, of
//     earlier choices) with the same prompt since the server started: a
//     per-prompt arrival counter. Choice j of a request gets index+j.
//
// The reply of a choice, and the fault of a request, are functions of
// (Config.Sim.Seed, step, sample index) and the configuration only.
//
// # What is reproducible
//
//   - With seed: everything but the "created" time is a function of the
//     server's configuration, the prompt, seed and n, whatever the order,
//     concurrency or number of requests, across restarts.
//   - Without seed, a sequential client (one request at a time, each sent
//     after the last reply or error): the same requests in the same order
//     to a freshly started server with the same configuration get the same
//     replies and the same faults.
//   - Without seed, concurrent requests with the same prompt: the first m
//     such requests together get the replies of sample indexes 0..m-1, but
//     which request gets which index depends on arrival order. Requests
//     with different prompts never affect each other.
//
// So a client that wants schedule-independent results sends a distinct
// seed per sample (mdap's solver could send its sample index + 1: the
// langchaingo OpenAI client omits a seed of 0).
//
// # Faults
//
// Config.Faults answers a fraction of chat completion requests with a
// fault instead: 429 with Retry-After, 500, a hang until the client gives
// up, a body truncated after its headers, or 200 with a body that is not
// JSON. A fault is drawn per request from (Config.Sim.Seed, step, sample
// index), so it is reproducible as replies are, and consumes the request's
// sample index: a client that retries without a seed gets the prompt's
// next index, and so may get a reply.
//
// # Memory
//
// The arrival counters hold one entry per distinct prompt seen without a
// seed, for the server's lifetime: about 40 bytes each (38 measured at a
// million prompts, a 20-disk Towers of Hanoi run). Requests with a seed
// add none.
package simserver
