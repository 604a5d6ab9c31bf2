package mcpserver

import (
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The tools' names.
const (
	ToolVote          = "vote"
	ToolSampleAndVote = "sample_and_vote"
	ToolRunTask       = "run_task"
	ToolKMin          = "kmin"
	ToolParse         = "parse"
)

func ptr[T any](v T) *T { return &v }

func (s *Server) addTools() {
	closed := ptr(false)
	// run_task changes files only if the policy lets a side-effect tool
	// run.
	destructive := false
	for _, name := range s.exec.Loaded() {
		destructive = destructive || !s.exec.ReadOnly(name)
	}
	addTool(s, &mcp.Tool{
		Name:  ToolVote,
		Title: "Vote on replies, first-to-ahead-by-k",
		Description: `Tally model replies you sampled yourself, with mdap's keys and rule. Each reply (text, or native tool calls in OpenAI's shape) is judged as mdap's solver judges a sample: red-flagged (empty, cut off, overlong, unparseable) and then it never votes, or reduced to a canonical answer and its key; replies with equal keys vote together whatever their spelling (key order, white space, 1 vs 1.0, fenced vs inline JSON vs native tool call, rationale).
The replies are tallied in order: the first reply at which one key leads every other by k valid votes decides, and later replies do not count. Undecided, the result says how many more samples could decide at the least (k minus the leader's lead).`,
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: closed},
	}, s.voteTool)
	addTool(s, &mcp.Tool{
		Name:        ToolParse,
		Title:       "Judge one reply",
		Description: `Judge one model reply as mdap's solver does: its red flag with the reason, or the answer it votes with, that answer's canonical JSON form and its vote key. Use it to see why two replies did or did not vote together.`,
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: closed},
	}, s.parseTool)
	addTool(s, &mcp.Tool{
		Name:  ToolSampleAndVote,
		Title: "Sample a prompt until one answer leads by k",
		Description: `Sample one prompt (chat messages) through the server's model(s), one stateless call per sample, until one answer leads every other by k valid votes (first-to-ahead-by-k), with red flags that throw suspect replies away. Returns the winner, the tally, every sample and the token usage, or "undecided" when the sample budget runs out. Sends a progress notification per sample when the request carries a progress token; cancelling the request stops the sampling.
The first sample is drawn at temperature 0 and the others at 0.1 unless you give a schedule. Only the server's models may be used. The simulated model (sim) answers only Towers of Hanoi step prompts.`,
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(true)},
	}, s.sampleTool)
	addTool(s, &mcp.Tool{
		Name:  ToolRunTask,
		Title: "Run a spec task with voting on every step",
		Description: `Solve a task described by a spec (inline JSON, or a file under the server's root) step by step: each step is sampled and voted on first-to-ahead-by-k; a winning tool call runs through the server's executor, under its tool policy (read-only unless the operator allowed more) and sandboxed to its root, and its result reaches the next step's prompt. Every decided step is journaled in the server's state folder before the next starts.
Returns the summary: steps, samples, red flags, tool calls, the final state and done. Sends a progress notification per step when the request carries a progress token. A cancelled or failed run resumes from its journal: call again with resume: true and the same spec and settings.`,
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: false, DestructiveHint: ptr(destructive), OpenWorldHint: ptr(true)},
	}, s.runTool)
	addTool(s, &mcp.Tool{
		Name:        ToolKMin,
		Title:       "The scaling laws of voting",
		Description: `The scaling laws of first-to-ahead-by-k voting: for a task of S steps whose valid samples are right with probability p, the smallest margin k_min for which the whole task succeeds with probability at least target, p_full at that k, the expected samples per step and in all, and the cost at a price per sample.`,
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: closed},
	}, s.kminTool)
	s.addProblemTool()
}
