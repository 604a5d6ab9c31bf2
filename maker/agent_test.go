package maker

import (
	"context"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mdap-go/mdap/intent"
	"github.com/mdap-go/mdap/maker/journal"
	"github.com/mdap-go/mdap/vote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// seenCall is what a model call carried: every setting of the Solver that
// shapes a call shows in it.
type seenCall struct {
	Messages string // the prompt as sent (declared tools in the prompt included)
	Options  string // the call options, applied, as JSON
	Tools    int    // tools declared natively
	Deadline bool   // the call had a deadline (Solver.Timeout)
	Schema   string // the answer schema in the call's context
	Observed bool   // the Observer saw the call start
}

// callRecorder answers like scripted and records each call's seenCall by
// sample identity.
type callRecorder struct {
	scripted
	mu   sync.Mutex
	seen map[SampleID]seenCall
}

type observedKey struct{}

func (m *callRecorder) GenerateContent(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
	var o llms.CallOptions
	for _, opt := range opts {
		opt(&o)
	}
	tools := len(o.Tools)
	o.Tools = nil
	ob, _ := json.Marshal(o)
	mb, _ := json.Marshal(msgs)
	_, deadline := ctx.Deadline()
	id, _ := SampleIDFrom(ctx)
	schema, _ := AnswerSchemaFrom(ctx)
	m.mu.Lock()
	if m.seen == nil {
		m.seen = map[SampleID]seenCall{}
	}
	m.seen[id] = seenCall{Messages: string(mb), Options: string(ob), Tools: tools, Deadline: deadline, Schema: string(schema), Observed: ctx.Value(observedKey{}) != nil}
	m.mu.Unlock()
	return m.scripted.GenerateContent(ctx, msgs, opts...)
}

// callObserver marks every call's context, so the model can see that the
// Observer was asked.
type callObserver struct{ calls atomic.Int64 }

func (o *callObserver) StartRun(ctx context.Context, _ RunInfo) (context.Context, func(*Report, error)) {
	return ctx, func(*Report, error) {}
}
func (o *callObserver) StartStep(ctx context.Context, _ int) (context.Context, func(*journal.StepRecord, *Report, error)) {
	return ctx, func(*journal.StepRecord, *Report, error) {}
}
func (o *callObserver) StartCall(ctx context.Context, _ CallInfo) (context.Context, func(CallResult)) {
	o.calls.Add(1)
	return context.WithValue(ctx, observedKey{}, true), func(CallResult) {}
}
func (o *callObserver) StartTool(ctx context.Context, _ ToolInfo) (context.Context, func(intent.Observation, error)) {
	return ctx, func(intent.Observation, error) {}
}

// TestDrawCallsAsSolveCalls: a Solver with every call-shaping setting set
// (reply cap, temperatures, native and prompt tool declarations, call
// options, Timeout, Observer, Budget) draws each sample of a run again
// with Draw, and every call Draw makes is the call Solve made: the same
// prompt, options, native tools, deadline and observation. Before Draw
// and Solve shared newAgent, Draw dropped the Observer (and the Budget:
// see TestDrawKeepsTheBudget).
func TestDrawCallsAsSolveCalls(t *testing.T) {
	right := func(_ SampleID, prompt string) (string, string) {
		return `{"next": ` + itoa(current(prompt)+1) + `}`, "stop"
	}
	tool := llms.Tool{Type: "function", Function: &llms.FunctionDefinition{Name: "lookup", Description: "looks up", Parameters: map[string]any{"type": "object"}}}
	for _, decl := range []ToolDeclaration{DeclareNative, DeclarePrompt} {
		t.Run(string(decl), func(t *testing.T) {
			run := &callRecorder{scripted: scripted{reply: right}}
			obs := &callObserver{}
			settings := func(m llms.Model) *Solver {
				return &Solver{
					Config:   Config{Vote: vote.Config{K: 2, Parallel: 1}, MaxTokens: 321, Temperature: func(i int) float64 { return 0.25 + float64(i)/100 }, ToolDeclaration: decl, CallOptions: []llms.CallOption{llms.WithTopP(0.7), llms.WithStopWords([]string{"END"})}, Timeout: time.Minute, Price: Price{InputPerMillion: 1, OutputPerMillion: 2}},
					Model:    m,
					Tools:    []llms.Tool{tool},
					Observer: obs,
					Budget:   newCapSpender(1000),
				}
			}
			_, err := settings(run).Solve(context.Background(), &counter{target: 4})
			require.NoError(t, err)
			require.NotEmpty(t, run.seen)
			solveCalls := obs.calls.Load()

			drawn := &callRecorder{scripted: scripted{reply: right}}
			s := settings(drawn)
			for id := range run.seen {
				fresh := &counter{n: id.Step, target: 4}
				d, err := drawOne(s, context.Background(), id, fresh.Prompt(nil), fresh.Decode)
				require.NoError(t, err)
				require.NoError(t, d.Err)
			}
			assert.Equal(t, run.seen, drawn.seen, "Draw's calls are Solve's")
			assert.Equal(t, 2*solveCalls, obs.calls.Load(), "the Observer saw Draw's calls as it saw Solve's")
			for _, c := range drawn.seen {
				assert.True(t, c.Deadline && c.Observed, "the settings reached the call: %+v", c)
				assert.Contains(t, c.Options, `"max_tokens":321`)
			}
		})
	}
}

// TestDrawKeepsTheBudget: a Budget set on the Solver caps Draw's calls
// as it caps Solve's: a call whose worst case passes the cap is not
// started, and the sample fails with ErrBudget. With Draw building its
// own agent without the budget (the bug behind calibrate --max-cost
// billing $51 against a $0.001 cap) the model is called and this fails.
func TestDrawKeepsTheBudget(t *testing.T) {
	m := &scripted{reply: func(SampleID, string) (string, string) { return `{"next": 5}`, "stop" }}
	b := newCapSpender(0.001)
	s := &Solver{Config: Config{Price: Price{InputPerMillion: 1000, OutputPerMillion: 1000}}, Model: m, Budget: b}
	msgs := (&counter{n: 4}).Prompt(nil)
	d, err := drawOne(s, context.Background(), SampleID{}, msgs, nil)
	require.NoError(t, err)
	require.ErrorIs(t, d.Err, ErrBudget)
	assert.Zero(t, m.calls.Load(), "the call was not started")
	assert.Zero(t, b.Spent())

	// Within the cap, the call runs and is settled against the budget.
	b.Cap = 10
	d, err = drawOne(s, context.Background(), SampleID{}, msgs, nil)
	require.NoError(t, err)
	require.NoError(t, d.Err)
	assert.Positive(t, b.Spent())
	assert.LessOrEqual(t, b.Spent(), b.Cap)
}

// TestOneAgentConstructor: newAgent is the only place a microagent is
// built, so no path (Solve, Draw, escalation, and calibrate and MCP
// through Draw and Solve) can leave out a setting another path sets. A
// second microagent literal anywhere in the package fails it.
func TestOneAgentConstructor(t *testing.T) {
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	fset := token.NewFileSet()
	var sites []string
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		require.NoError(t, err)
		f, err := parser.ParseFile(fset, name, src, 0)
		require.NoError(t, err)
		ast.Inspect(f, func(n ast.Node) bool {
			if lit, ok := n.(*ast.CompositeLit); ok {
				if id, ok := lit.Type.(*ast.Ident); ok && id.Name == "microagent" {
					sites = append(sites, fset.Position(lit.Pos()).String())
				}
			}
			return true
		})
	}
	require.Len(t, sites, 1, "one microagent literal, in newAgent: %v", sites)
	assert.Contains(t, sites[0], "agent.go")
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }
