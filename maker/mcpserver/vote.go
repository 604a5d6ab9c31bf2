package mcpserver

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/mdap-go/mdap/intent"
	"github.com/mdap-go/mdap/intent/match"
	"github.com/mdap-go/mdap/internal/toolcall"
	"github.com/mdap-go/mdap/internal/words"
	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/inspect"
	"github.com/mdap-go/mdap/vote"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Candidate is one model reply as a client received it: text, or native
// tool calls in OpenAI's shape, or both.
type Candidate struct {
	Text         string     `json:"text,omitempty" jsonschema:"the reply's text content"`
	ToolCalls    []ToolCall `json:"tool_calls,omitempty" jsonschema:"the reply's native tool calls, in OpenAI's shape; a step proposes at most one"`
	FinishReason string     `json:"finish_reason,omitempty" jsonschema:"the provider's stop reason (OpenAI finish_reason, Anthropic stop_reason): length or max_tokens means the reply was cut off and is red-flagged"`
	OutputTokens int        `json:"output_tokens,omitempty" jsonschema:"the reply's length in tokens as the provider reported it; absent, it is estimated at four bytes a token"`
}

// ToolCall is a native tool call in OpenAI's shape.
type ToolCall struct {
	ID       string       `json:"id,omitempty" jsonschema:"the call's id (ignored by the key)"`
	Type     string       `json:"type,omitempty" jsonschema:"function, or empty"`
	Function FunctionCall `json:"function" jsonschema:"the function called"`
}

// FunctionCall is the function of a ToolCall.
type FunctionCall struct {
	Name      string `json:"name" jsonschema:"the tool's name"`
	Arguments any    `json:"arguments,omitempty" jsonschema:"the arguments: JSON text, as OpenAI sends them, or a JSON object"`
}

// reply turns c into the maker.Reply the solver would have read.
func (c Candidate) reply() (maker.Reply, error) {
	r := maker.Reply{Text: c.Text, StopReason: c.FinishReason, OutputTokens: c.OutputTokens}
	for i, tc := range c.ToolCalls {
		// Arguments holds what the client's JSON held (a string, an
		// object, ...): back to JSON, then read as every wire call is.
		raw, err := json.Marshal(tc.Function.Arguments)
		if err != nil {
			return r, fmt.Errorf("%w: tool call %d: arguments: %v", ErrArgument, i, err)
		}
		call := toolcall.Call{ID: tc.ID, Type: tc.Type, Function: &toolcall.Function{Name: tc.Function.Name, Arguments: raw}}
		r.ToolCalls = append(r.ToolCalls, call.LLM())
	}
	if c.OutputTokens == 0 {
		r.Estimated = true
		r.OutputTokens = maker.EstimateReplyTokens(r.Text, r.ToolCalls)
	}
	return r, nil
}

// Verdict is one reply as the solver judges it: its red flag with the
// reason, or the answer it votes with, that answer's canonical form and
// its key. Two replies vote together exactly when their keys are equal.
type Verdict struct {
	Flag      string         `json:"flag,omitempty" jsonschema:"the red flag (empty, overlong, cut off, unparseable, format); empty when the reply may vote"`
	Reason    string         `json:"reason,omitempty" jsonschema:"why the reply was red-flagged, in detail"`
	Key       string         `json:"key,omitempty" jsonschema:"the vote key, in hex; equal keys vote together"`
	Canonical string         `json:"canonical,omitempty" jsonschema:"the answer's canonical JSON text, which the key hashes"`
	Output    *intent.Output `json:"output,omitempty" jsonschema:"the answer: its value and/or its tool intent"`
}

func verdictOf(v inspect.Verdict) Verdict {
	return Verdict{Flag: v.Flag, Reason: v.Reason, Key: v.Key, Canonical: v.Canonical, Output: v.Output}
}

// ParseInput is the input of the parse tool.
type ParseInput struct {
	Reply     Candidate `json:"reply" jsonschema:"the reply to judge"`
	MaxTokens int       `json:"max_tokens,omitempty" jsonschema:"the reply cap in tokens; a longer reply is red-flagged as overlong (default 750)"`
}

// ParseOutput is the output of the parse tool.
type ParseOutput struct {
	Votes bool `json:"votes" jsonschema:"true when the reply may vote (no red flag)"`
	Verdict
}

// VoteInput is the input of the vote tool.
type VoteInput struct {
	Candidates []Candidate `json:"candidates" jsonschema:"the replies, in the order they were sampled"`
	K          int         `json:"k,omitempty" jsonschema:"the margin: an answer wins when it leads every other by k valid votes (default 3)"`
	MaxTokens  int         `json:"max_tokens,omitempty" jsonschema:"the reply cap in tokens; a longer reply is red-flagged as overlong (default 750)"`
	// AnswerSchema, when given, groups the candidates by the matchers it
	// declares with x-mdap-match, as a run of a spec with that answer
	// contract would (see docs/matching.md).
	AnswerSchema any `json:"answer_schema,omitempty" jsonschema:"optional: the answer contract (a JSON Schema); its x-mdap-match annotations (text, set, a number tolerance) make equivalent answers vote together, as in a run"`
	// Tools, when given, normalise a candidate's tool call as a run's
	// executor does: arguments healed against the tool's parameters
	// schema ("[\"src\"]" and ["src"] are one call), and refused ones
	// red-flagged. No tool is ever run.
	Tools []FunctionTool `json:"tools,omitempty" jsonschema:"optional: the tools the candidates may call, in OpenAI's shape; a call's arguments are healed and checked against its parameters schema as a run's executor does, so spellings of one call vote together; nothing is run"`
}

// ReplyVerdict is one candidate's verdict in a vote.
type ReplyVerdict struct {
	Index int `json:"index" jsonschema:"the candidate's position, from 0"`
	Verdict
	Counted bool `json:"counted" jsonschema:"false for a reply after the deciding one: the race had ended"`
}

// KeyVotes is one answer's votes.
type KeyVotes struct {
	Key        string `json:"key" jsonschema:"the vote key, in hex"`
	Votes      int    `json:"votes" jsonschema:"valid votes for the key"`
	FirstIndex int    `json:"first_index" jsonschema:"the index of the key's first vote"`
	Canonical  string `json:"canonical,omitempty" jsonschema:"the answer's canonical JSON text"`
}

// Tally is what a vote counted, up to its decision.
type Tally struct {
	Votes   []KeyVotes     `json:"votes" jsonschema:"the valid votes per answer, most first"`
	Valid   int            `json:"valid" jsonschema:"replies that voted"`
	Flagged int            `json:"flagged" jsonschema:"red-flagged replies, which never vote"`
	Flags   map[string]int `json:"flags" jsonschema:"red-flagged replies by flag"`
}

// Winner is the answer that led by k.
type Winner struct {
	Key        string         `json:"key" jsonschema:"the winning vote key, in hex"`
	Canonical  string         `json:"canonical" jsonschema:"the winning answer's canonical JSON text"`
	Output     *intent.Output `json:"output" jsonschema:"the winning answer, as its first vote gave it"`
	Votes      int            `json:"votes" jsonschema:"its valid votes at the decision"`
	FirstIndex int            `json:"first_index" jsonschema:"the index of its first vote"`
	DecidedAt  int            `json:"decided_at" jsonschema:"the index of the reply that gave it a lead of k"`
}

// VoteOutput is the output of the vote tool.
type VoteOutput struct {
	Decided bool           `json:"decided" jsonschema:"true when an answer led every other by k valid votes"`
	Message string         `json:"message" jsonschema:"the outcome in words"`
	K       int            `json:"k" jsonschema:"the margin"`
	Winner  *Winner        `json:"winner,omitempty" jsonschema:"the decision, when decided"`
	Leader  string         `json:"leader,omitempty" jsonschema:"when undecided: the key with the most votes (the earliest on a tie)"`
	Lead    int            `json:"lead" jsonschema:"the leader's margin over the runner-up"`
	Need    int            `json:"need" jsonschema:"when undecided: the fewest more samples that could decide, k minus the lead (all of them votes for the leader)"`
	Tally   Tally          `json:"tally" jsonschema:"the votes and red flags counted"`
	Replies []ReplyVerdict `json:"replies" jsonschema:"each candidate's verdict, in order"`
}

// board reports the valid votes a race committed, per key: the counts,
// each key's first vote and the leader. It decides nothing: vote.Race does.
type board struct {
	votes   map[uint64]int
	first   map[uint64]int // index of each key's first vote
	canon   map[uint64]string
	outputs map[uint64]*intent.Output
}

func newBoard() *board {
	return &board{votes: map[uint64]int{}, first: map[uint64]int{}, canon: map[uint64]string{}, outputs: map[uint64]*intent.Output{}}
}

// add counts a vote of sample i.
func (b *board) add(i int, key uint64, canonical string, out *intent.Output) {
	if _, ok := b.first[key]; !ok {
		b.first[key], b.canon[key], b.outputs[key] = i, canonical, out
	}
	b.votes[key]++
}

// leader returns the key with the most votes (the earliest on a tie) and
// its lead over the runner-up; lead 0 with no votes.
func (b *board) leader() (uint64, int) {
	var top uint64
	found := false
	for key, n := range b.votes {
		if !found || n > b.votes[top] || (n == b.votes[top] && b.first[key] < b.first[top]) {
			top, found = key, true
		}
	}
	if !found {
		return 0, 0
	}
	second := 0
	for key, n := range b.votes {
		if key != top && n > second {
			second = n
		}
	}
	return top, b.votes[top] - second
}

// tally lists the votes, most first, then by first vote.
func (b *board) tally() []KeyVotes {
	out := make([]KeyVotes, 0, len(b.votes))
	for key, n := range b.votes {
		out = append(out, KeyVotes{Key: hexKey(key), Votes: n, FirstIndex: b.first[key], Canonical: b.canon[key]})
	}
	slices.SortFunc(out, func(a, b KeyVotes) int {
		return cmp.Or(cmp.Compare(b.Votes, a.Votes), cmp.Compare(a.FirstIndex, b.FirstIndex))
	})
	return out
}

func hexKey(k uint64) string { return strconv.FormatUint(k, 16) }

// Vote judges each candidate with inspect.Reply and tallies them in
// order with vote.Race, one at a time, so the decision is vote.Race's own: the
// first index at which an answer leads every other by k valid votes
// decides, and the candidates after it do not count. Red-flagged replies
// never vote. Undecided, it says the least number of further samples that
// could decide (k minus the lead). Errors wrap ErrArgument: k outside
// 1..maxK, a negative max_tokens, a candidate whose tool arguments cannot
// be encoded; an answer_schema's embedding or judge field (a client's
// schema may name no model: a Server's Config.Embedder and Config.Judge
// serve them). Cost: one parse and one key per candidate.
func Vote(in VoteInput, maxK int) (VoteOutput, error) {
	return voteWith(context.Background(), in, maxK, match.Options{})
}

// voteWith is Vote with the server's embedder and judge for the answer
// schema's embedding and judge fields, called under ctx. Errors: Vote's,
// and vote.ErrMatch when the embedder or judge fails.
func voteWith(ctx context.Context, in VoteInput, maxK int, own match.Options) (VoteOutput, error) {
	k := or(in.K, vote.DefaultK)
	if k < 1 || k > maxK {
		return VoteOutput{}, fmt.Errorf("%w: k %d: use 1 to %d", ErrArgument, in.K, maxK)
	}
	if in.MaxTokens < 0 {
		return VoteOutput{}, fmt.Errorf("%w: max_tokens %d: use a positive cap, or leave it out for 750", ErrArgument, in.MaxTokens)
	}
	ex, err := declaredExecutor(in.Tools)
	if err != nil {
		return VoteOutput{}, err
	}
	out := VoteOutput{K: k, Replies: make([]ReplyVerdict, len(in.Candidates)), Tally: Tally{Flags: map[string]int{}}}
	samples := make([]vote.Sample[int], len(in.Candidates))
	for i, c := range in.Candidates {
		r, err := c.reply()
		if err != nil {
			return VoteOutput{}, fmt.Errorf("candidate %d: %w", i, err)
		}
		v := inspectWith(ex, r, in.MaxTokens)
		out.Replies[i] = ReplyVerdict{Index: i, Verdict: verdictOf(v)}
		if v.Flag != "" {
			samples[i] = vote.Sample[int]{Flag: errors.New(v.Flag)}
			continue
		}
		key, err := strconv.ParseUint(v.Key, 16, 64)
		if err != nil { // Inspect writes keys in hex
			return VoteOutput{}, fmt.Errorf("candidate %d: key %q: %w", i, v.Key, err)
		}
		samples[i] = vote.Sample[int]{Value: i, Key: key}
	}
	if err := matchCandidates(ctx, in.AnswerSchema, own, samples, out.Replies); err != nil {
		return VoteOutput{}, err
	}
	// The race draws the candidates in order; running out of them ends it
	// as a cancelled race, whose tally is what the candidates gave.
	ctx, outOfCandidates := context.WithCancel(context.Background())
	defer outOfCandidates()
	cfg := vote.Config{K: k, Parallel: 1, MaxSamples: max(k, len(samples)), Backoff: vote.NoBackoff}
	res, err := vote.Race(ctx, cfg, func(_ context.Context, i int) vote.Sample[int] {
		if i >= len(samples) {
			outOfCandidates()
			return vote.Sample[int]{Err: context.Canceled}
		}
		return samples[i]
	})
	tally := res.Tally
	if u, ok := errors.AsType[*vote.UndecidedError](err); ok {
		tally = u.Tally
	} else if err != nil {
		return VoteOutput{}, err
	}
	committed := tally.Valid + tally.Flagged
	out.Tally.Valid, out.Tally.Flagged = tally.Valid, tally.Flagged
	maps.Copy(out.Tally.Flags, tally.Flags)
	b := newBoard()
	for i := range committed {
		out.Replies[i].Counted = true
		if rv := out.Replies[i]; rv.Flag == "" {
			b.add(i, samples[i].Key, rv.Canonical, rv.Output)
		}
	}
	out.Tally.Votes = b.tally()
	top, lead := b.leader()
	out.Lead = lead
	if err == nil {
		decided := committed - 1
		out.Decided = true
		out.Winner = &Winner{Key: hexKey(res.Key), Canonical: b.canon[res.Key], Output: b.outputs[res.Key], Votes: res.Votes[res.Key], FirstIndex: b.first[res.Key], DecidedAt: decided}
		out.Message = fmt.Sprintf("decided at reply %d: key %s leads every other answer by %d with %s; %s",
			decided, hexKey(res.Key), lead, words.Plural(res.Votes[res.Key], "vote"), later(len(in.Candidates)-decided-1))
		return out, nil
	}
	out.Need = k - lead
	if len(b.votes) > 0 {
		out.Leader = hexKey(top)
	}
	out.Message = fmt.Sprintf("undecided, need more samples: after %s (%d valid, %d red-flagged) no answer leads by %d; at least %s more (votes for the leader) could decide",
		words.Plural(len(in.Candidates), "reply"), out.Tally.Valid, out.Tally.Flagged, k, words.Plural(out.Need, "sample"))
	return out, nil
}

func later(n int) string {
	if n == 0 {
		return "it was the last reply"
	}
	return fmt.Sprintf("the %s after it did not count", words.Plural(n, "reply"))
}

func (s *Server) voteTool(ctx context.Context, _ *mcp.CallToolRequest, in VoteInput) (*mcp.CallToolResult, VoteOutput, error) {
	if n := len(in.Candidates); n > s.cfg.MaxCandidates {
		return nil, VoteOutput{}, fmt.Errorf("%w: %d candidates: this server takes at most %d in one call", ErrArgument, n, s.cfg.MaxCandidates)
	}
	out, err := voteWith(ctx, in, s.cfg.MaxK, s.matchers())
	return nil, out, err
}

// Parse judges one reply as the solver's draw does (inspect.Reply, with
// every red flag and the generic decoder). Errors wrap ErrArgument: a
// negative max_tokens, tool arguments that cannot be encoded.
func Parse(in ParseInput) (ParseOutput, error) {
	if in.MaxTokens < 0 {
		return ParseOutput{}, fmt.Errorf("%w: max_tokens %d: use a positive cap, or leave it out for 750", ErrArgument, in.MaxTokens)
	}
	r, err := in.Reply.reply()
	if err != nil {
		return ParseOutput{}, err
	}
	v := inspect.Reply(r, in.MaxTokens, maker.FlagRules{}, nil)
	return ParseOutput{Votes: v.Flag == "", Verdict: verdictOf(v)}, nil
}

func (s *Server) parseTool(_ context.Context, _ *mcp.CallToolRequest, in ParseInput) (*mcp.CallToolResult, ParseOutput, error) {
	out, err := Parse(in)
	return nil, out, err
}
