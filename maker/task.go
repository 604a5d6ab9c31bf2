package maker

import (
	"encoding/json"
	"time"

	"github.com/mdap-go/mdap/intent"
	"github.com/mdap-go/mdap/vote"
	"github.com/tmc/langchaingo/llms"
)

// Task is one many-step job, seen by the solver as a state machine that it
// advances one decided step at a time. A microagent is stateless: all it
// knows of the task is what Prompt puts in front of it.
//
// The solver calls Prompt and Apply from one goroutine, one step at a time,
// and Decode concurrently from many samplers between them: Decode must be
// safe for concurrent use, must not change the task, and must be a
// function of the reply and the task's current state alone (the solver
// decodes identical replies of one step once). Apply must be
// deterministic: resuming a run replays the journal's winners through Apply
// on a fresh task, so the same winners must give the same state.
type Task interface {
	// Fingerprint identifies the task and its starting state. A journal
	// written for one fingerprint is refused for another.
	Fingerprint() string

	// Prompt returns the messages of the current step's microagent. last is
	// the observation of the tool call the previous step's winner proposed,
	// or nil when it proposed none.
	//
	// Cache-friendly layout: put what every step shares (the rules, the
	// format, the examples, the task's fixed description) first, byte for
	// byte the same at every step, and what changes (the state, the last
	// move, the observation) last: providers bill a cached prompt prefix
	// at a fraction of the input price (docs/cost.md has their rules), and
	// a step number or a time stamp near the top leaves nothing cached.
	// For Anthropic, maker/models marks the system messages' text: keep
	// the static part there, the step's data in the human message.
	Prompt(last *intent.Observation) []llms.MessageContent

	// Decode turns a reply into the step's answer, or a red flag: an error
	// means the reply may not vote (wrap ErrFormat for a task-specific
	// format check). The solver has already flagged empty, overlong and
	// cut-off replies; DecodeReply is the usual first move.
	Decode(r Reply) (intent.Output, error)

	// Apply advances the task with the step's winning answer. obs is the
	// observation of the winner's tool intent, or nil when it had none.
	// done reports that the task is finished; an error stops the run.
	Apply(winner intent.Output, obs *intent.Observation) (done bool, err error)
}

// Snapshotter is implemented by tasks whose state can be saved and
// restored. The journal then holds a checkpoint every so many steps
// (Journal.CheckpointEvery), and a resume restores the last one instead
// of replaying every step before it, so resuming costs a bounded replay
// whatever the run's length. Restore(Snapshot()) must give a task that
// behaves exactly as the one snapshotted; Snapshot is called between
// steps, from the goroutine that called Solve.
type Snapshotter interface {
	Snapshot() (json.RawMessage, error)
	Restore(state json.RawMessage) error
}

// The GenerationInfo keys a model sets on a choice beyond langchaingo's
// fields. WorkerInfoKey names the worker that drew the choice (a string,
// Reply.Worker) when the model draws on other machines: only the engine
// sets it (maker/cluster overwrites whatever a worker's model put there).
// InfoResponseID and InfoResponseModel are what the server said of the
// response: its id and the model that answered (which may name a version
// the request's model did not); maker/models sets them on every choice of
// a response whose body carried them, and observers read them
// (maker/observe does).
const (
	WorkerInfoKey     = "mdap_worker"
	InfoResponseID    = "ResponseID"
	InfoResponseModel = "ResponseModel"
)

// Reply is one sample's raw answer from a model, before red flags.
type Reply struct {
	// Text is the reply's text content.
	Text string
	// ToolCalls are the native tool calls the model made, if any.
	ToolCalls []llms.ToolCall
	// StopReason is the provider's reason for stopping ("stop", "length",
	// "tool_calls", ...), empty when it gives none.
	StopReason string
	// InputTokens and OutputTokens are the provider's usage figures, or the
	// solver's estimate (about four bytes a token) when the provider
	// reports none. Estimated is true when OutputTokens, the figure the
	// overlong red flag reads, is an estimate.
	InputTokens, OutputTokens int
	Estimated                 bool
	// Worker is who drew the reply when the model draws on other
	// machines and says so: the engine's worker identity, which
	// maker/cluster takes from the credential that answered and puts
	// under the choice's GenerationInfo key WorkerInfoKey. Empty for a
	// model called in process. A race votes it as vote.Sample.Voter.
	Worker string

	// cachedIn, cacheWrite: the parts of InputTokens read from and written
	// to the provider's prompt cache; requests: 1 on the first reply of a
	// request, 0 on the others of a request of several choices.
	cachedIn, cacheWrite, requests int
}

// usage is the reply's part of what its request cost.
func (r Reply) usage(took time.Duration) vote.Usage {
	return vote.Usage{InputTokens: r.InputTokens, OutputTokens: r.OutputTokens, Latency: took,
		CachedInputTokens: r.cachedIn, CacheWriteTokens: r.cacheWrite, Requests: r.requests}
}

// TaskVersioner is implemented by tasks whose rules (prompts, how a winner
// is applied, when the task is done) have a version of their own. The
// journal records it, and a resume of a journal recorded under another
// version is refused (ErrMismatch), naming both. A task without it
// records none, and its Fingerprint alone identifies it.
type TaskVersioner interface {
	// TaskVersion names the version of the task's rules; any string.
	TaskVersion() string
}

// taskVersion is task's TaskVersion, or "" for a task without one.
func taskVersion(task Task) string {
	if v, ok := task.(TaskVersioner); ok {
		return v.TaskVersion()
	}
	return ""
}
