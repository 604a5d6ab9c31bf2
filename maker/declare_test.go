package maker

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mdap-go/mdap/categories"
	"github.com/mdap-go/mdap/executor"
	"github.com/mdap-go/mdap/intent"
	"github.com/mdap-go/mdap/maker/journal"
	"github.com/mdap-go/mdap/maker/journalfile"
	"github.com/mdap-go/mdap/vote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// declModel answers a tool call natively when the call declares the tool
// natively, in text when the prompt declares it with its argument, and a
// plain count otherwise; it records what each call declared.
type declModel struct {
	native bool // NativeTools
	args   map[string]any

	mu      sync.Mutex
	natives []int    // len(Tools) of each call
	systems []string // the system text of each call
}

func (m *declModel) NativeTools() bool { return m.native }

func (m *declModel) GenerateContent(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
	var o llms.CallOptions
	for _, opt := range opts {
		opt(&o)
	}
	sys := ""
	for _, msg := range msgs {
		if msg.Role == llms.ChatMessageTypeSystem {
			for _, p := range msg.Parts {
				sys += p.(llms.TextContent).Text
			}
		}
	}
	m.mu.Lock()
	m.natives = append(m.natives, len(o.Tools))
	m.systems = append(m.systems, sys)
	m.mu.Unlock()
	prompt := msgs[len(msgs)-1].Parts[0].(llms.TextContent).Text
	if current(prompt) == 1 && !hasObservation(prompt) {
		args, _ := json.Marshal(m.args)
		switch {
		case len(o.Tools) > 0 && o.Tools[0].Function.Name == "probe":
			return &llms.ContentResponse{Choices: []*llms.ContentChoice{{StopReason: "tool_calls",
				ToolCalls: []llms.ToolCall{{ID: "c1", Type: "function", FunctionCall: &llms.FunctionCall{Name: "probe", Arguments: string(args)}}}}}}, nil
		case strings.Contains(sys, "- probe: probes") && strings.Contains(sys, "target (string, required)"):
			return &llms.ContentResponse{Choices: []*llms.ContentChoice{{StopReason: "stop",
				Content: fmt.Sprintf("```json\n{\"tool_intent\": {\"args\": %s, \"tool\": \"probe\"}}\n```", args)}}}, nil
		}
	}
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{{StopReason: "stop", Content: fmt.Sprintf(`{"next": %d}`, current(prompt)+1)}}}, nil
}

func (m *declModel) Call(ctx context.Context, prompt string, opts ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, opts...)
}

func probeExecutor(t *testing.T) *executor.Executor {
	t.Helper()
	tax := categories.Builtin()
	probe := executor.NewTool("probe", categories.Web, "probes a target",
		json.RawMessage(`{"type":"object","properties":{"target":{"type":"string","description":"what to probe"}},"required":["target"]}`),
		func(ctx context.Context, args map[string]any) (string, error) { return "probed", nil })
	ex, err := executor.New(executor.WithTaxonomy(tax), executor.WithPolicy(categories.Policy{Allow: []string{"probe"}}), executor.WithTools(probe))
	require.NoError(t, err)
	return ex
}

// probeTools declares the probe tool as executor/declare would: its
// registered schema and description.
func probeTools(t *testing.T, ex *executor.Executor) []llms.Tool {
	raw, ok := ex.ToolSchema("probe")
	require.True(t, ok)
	var params map[string]any
	require.NoError(t, json.Unmarshal(raw, &params))
	return []llms.Tool{{Type: "function", Function: &llms.FunctionDefinition{Name: "probe", Description: ex.Describe("probe"), Parameters: params}}}
}

func TestToolDeclarationModes(t *testing.T) {
	ex := probeExecutor(t)
	tools := probeTools(t, ex)
	for _, c := range []struct {
		mode          ToolDeclaration
		nativeModel   bool
		native, text  bool
		journaledMode ToolDeclaration
	}{
		{DeclareAuto, true, true, false, DeclareNative},
		{"", false, false, true, DeclarePrompt},
		{DeclareNative, false, true, false, DeclareNative},
		{DeclarePrompt, true, false, true, DeclarePrompt},
		{DeclareBoth, false, true, true, DeclareBoth},
	} {
		t.Run(string(c.mode)+fmt.Sprint(c.nativeModel), func(t *testing.T) {
			m := &declModel{native: c.nativeModel, args: map[string]any{"target": "x"}}
			path := filepath.Join(t.TempDir(), "j.jsonl")
			j, err := journalfile.Create(path)
			require.NoError(t, err)
			task := &counter{target: 3}
			rep, err := (&Solver{Config: Config{ToolDeclaration: c.mode, Vote: vote.Config{K: 2}}, Model: m, Executor: ex, Tools: tools, Journal: j}).Solve(context.Background(), task)
			require.NoError(t, err)
			require.NoError(t, j.Close())
			assert.Equal(t, 1, rep.ToolCalls, "the model called the tool: it was declared")
			assert.Zero(t, rep.Denied)
			for i := range m.natives {
				assert.Equal(t, c.native, m.natives[i] > 0, "call %d: native declaration", i)
				assert.Equal(t, c.text, strings.Contains(m.systems[i], "target (string, required): what to probe"), "call %d: prompt declaration", i)
			}
			var head journalHeader
			first, _, _ := strings.Cut(string(mustRead(t, path)), "\n")
			require.NoError(t, json.Unmarshal([]byte(first), &head))
			assert.Equal(t, c.journaledMode, head.Settings.ToolDeclaration, "the journal records the resolved choice")
		})
	}
}

func TestToolDeclarationResumeChecksMode(t *testing.T) {
	ex := probeExecutor(t)
	tools := probeTools(t, ex)
	path := filepath.Join(t.TempDir(), "j.jsonl")
	j, err := journalfile.Create(path)
	require.NoError(t, err)
	_, err = (&Solver{Config: Config{ToolDeclaration: DeclarePrompt, Vote: vote.Config{K: 2}}, Model: &declModel{args: map[string]any{"target": "x"}}, Executor: ex, Tools: tools, Journal: j}).Solve(context.Background(), &counter{target: 3})
	require.NoError(t, err)
	require.NoError(t, j.Close())
	j, err = journalfile.Open(path)
	require.NoError(t, err)
	defer j.Close()
	_, err = (&Solver{Config: Config{ToolDeclaration: DeclareNative, Vote: vote.Config{K: 2}}, Model: &declModel{args: map[string]any{"target": "x"}}, Executor: ex, Tools: tools, Journal: j}).Solve(context.Background(), &counter{target: 3})
	require.ErrorIs(t, err, journal.ErrMismatch)
	assert.Contains(t, err.Error(), "tool_declaration")
}

func TestToolDeclarationWithoutToolsChangesNothing(t *testing.T) {
	m := &declModel{}
	_, err := (&Solver{Config: Config{ToolDeclaration: DeclareBoth, Vote: vote.Config{K: 1}}, Model: m}).Solve(context.Background(), &counter{target: 2})
	require.NoError(t, err)
	for i := range m.natives {
		assert.Zero(t, m.natives[i])
		assert.Empty(t, m.systems[i], "no tools: no system message added")
	}
	_, err = (&Solver{Config: Config{ToolDeclaration: "telepathy"}, Model: m, Tools: probeTools(t, probeExecutor(t))}).Solve(context.Background(), &counter{target: 2})
	assert.ErrorIs(t, err, ErrToolDeclaration)
	_, err = ParseToolDeclaration("NATIVE")
	assert.ErrorIs(t, err, ErrToolDeclaration)
}

// randValue is a random JSON value of depth at most d.
func randValue(r *rand.Rand, d int) any {
	switch k := r.IntN(8); {
	case k == 0:
		return nil
	case k == 1:
		return r.IntN(2) == 0
	case k == 2:
		return r.IntN(2000) - 1000
	case k == 3:
		return float64(r.IntN(1000)) / 8
	case k == 4 && d > 0:
		n := r.IntN(4)
		a := make([]any, n)
		for i := range a {
			a[i] = randValue(r, d-1)
		}
		return a
	case k == 5 && d > 0:
		m := map[string]any{}
		for range r.IntN(4) {
			m[fmt.Sprintf("k%d", r.IntN(6))] = randValue(r, d-1)
		}
		return m
	}
	return fmt.Sprintf("s%d é \"q\"", r.IntN(100))
}

// TestDeclaringNeverChangesTheKey is a property test: for random
// intents, the key of the call a model makes natively (declared natively)
// and of the same call written in text (declared in the prompt) is the
// same key, so the choice of declaration never splits a vote.
func TestDeclaringNeverChangesTheKey(t *testing.T) {
	ex := probeExecutor(t)
	tools := probeTools(t, ex)
	r := rand.New(rand.NewPCG(21, 21))
	msgs := (&counter{n: 1}).Prompt(nil)
	seen := map[uint64]bool{}
	for i := range 500 {
		args := map[string]any{"target": fmt.Sprintf("t%d", r.IntN(50))}
		for range r.IntN(4) {
			args[fmt.Sprintf("a%d", r.IntN(5))] = randValue(r, 3)
		}
		keys := map[ToolDeclaration]uint64{}
		for _, mode := range []ToolDeclaration{DeclareNative, DeclarePrompt, DeclareBoth} {
			s := &Solver{Config: Config{ToolDeclaration: mode}, Model: &declModel{args: args}, Executor: ex, Tools: tools}
			d, err := drawOne(s, context.Background(), SampleID{Step: 1, Index: i}, msgs, nil)
			require.NoError(t, err)
			require.NoError(t, d.Err)
			require.Nil(t, d.Flag, "%v", d.Reason)
			require.NotNil(t, d.Output.Intent, "mode %s: the model proposed the call", mode)
			keys[mode] = d.Key
			want, err := s.Key(intent.Output{Intent: &intent.ToolIntent{Tool: "probe", Args: args}})
			require.NoError(t, err)
			assert.Equal(t, want, d.Key, "mode %s, args %v", mode, args)
		}
		assert.Equal(t, keys[DeclareNative], keys[DeclarePrompt], "args %v", args)
		assert.Equal(t, keys[DeclareNative], keys[DeclareBoth], "args %v", args)
		seen[keys[DeclareNative]] = true
	}
	assert.Greater(t, len(seen), 400, "the intents were different: the property was tested on many keys")
}

func TestAutoDeclarationFollowsTheModel(t *testing.T) {
	native, plain := &declModel{native: true}, &declModel{}
	for _, c := range []struct {
		model llms.Model
		want  ToolDeclaration
	}{
		{native, DeclareNative},
		{plain, DeclarePrompt},
		{&scripted{}, DeclarePrompt}, // a model that says nothing takes no native tools
	} {
		got, err := DeclareAuto.Resolve(c.model)
		require.NoError(t, err)
		assert.Equal(t, c.want, got)
	}
	all, err := NewEnsemble(native, native)
	require.NoError(t, err)
	mixed, err := NewEnsemble(native, plain)
	require.NoError(t, err)
	got, _ := DeclareAuto.Resolve(all)
	assert.Equal(t, DeclareNative, got, "every member takes native tools")
	got, _ = DeclareAuto.Resolve(mixed)
	assert.Equal(t, DeclarePrompt, got, "one member does not: the prompt, for every sample alike")
	got, _ = DeclareBoth.Resolve(plain)
	assert.Equal(t, DeclareBoth, got, "a forced choice stays")
}
