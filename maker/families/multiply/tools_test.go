package multiply_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mdap-go/mdap/categories"
	"github.com/mdap-go/mdap/executor"
	"github.com/mdap-go/mdap/maker/decompose"
	"github.com/mdap-go/mdap/maker/families/multiply"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// toolSolver is a solver agent that asks the calculator tool first, then
// answers with what it said.
type toolSolver struct{ calls atomic.Int64 }

var productRE = regexp.MustCompile(`PRODUCT=(\d+)`)

func (m *toolSolver) GenerateContent(_ context.Context, msgs []llms.MessageContent, _ ...llms.CallOption) (*llms.ContentResponse, error) {
	m.calls.Add(1)
	text := sim.PromptText(msgs)
	var reply string
	if got := productRE.FindStringSubmatch(text); got != nil {
		reply = fmt.Sprintf(`{"answer": %q}`, got[1])
	} else {
		v, err := decompose.ReadView(text)
		if err != nil {
			return nil, err
		}
		reply = fmt.Sprintf(`{"tool_intent": {"tool": "calc_product", "arguments": %s}}`, v.Problem)
	}
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: reply, StopReason: "stop"}}}, nil
}

func (m *toolSolver) Call(ctx context.Context, prompt string, opts ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, opts...)
}

func calcTool(category categories.Category) executor.Tool {
	schema := json.RawMessage(`{"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}}, "required": ["a", "b"]}`)
	return executor.NewTool("calc_product", category, "multiplies a and b", schema, func(_ context.Context, args map[string]any) (string, error) {
		a, _ := new(big.Int).SetString(fmt.Sprint(args["a"]), 10)
		b, _ := new(big.Int).SetString(fmt.Sprint(args["b"]), 10)
		return "PRODUCT=" + a.Mul(a, b).String(), nil
	})
}

// Solver agents may call tools: the winning call runs on the executor and
// its observation reaches the next step's prompt.
func TestSolversCallTools(t *testing.T) {
	t.Parallel()
	fam := multiply.Family{}
	sims, err := decompose.NewSim(fam, fam, decompose.SimConfig{Seed: 3})
	require.NoError(t, err)
	models := sims.Models()
	solver := &toolSolver{}
	models[decompose.RoleSolve] = solver
	ex, err := executor.New(executor.WithTools(calcTool(categories.Search)))
	require.NoError(t, err)
	res, err := decompose.Solve(context.Background(), fam, multiply.Generate(3, 4, 3),
		decompose.Config{Models: models, Executor: ex, Settings: decompose.Settings{K: map[decompose.Role]int{decompose.RoleSolve: 2}}})
	require.NoError(t, err)
	assert.True(t, *res.Correct)
	n := res.Roles[decompose.RoleSolve].Decisions
	assert.Equal(t, int64(4*n), solver.calls.Load(), "two tool-call samples, then two answer samples, per solve")
	assert.Equal(t, 4*n, res.Roles[decompose.RoleSolve].Samples)

	// Without the executor, the tool call is a red flag: no answer is decided.
	_, err = decompose.Solve(context.Background(), fam, multiply.Generate(3, 4, 3), decompose.Config{Models: models})
	assert.ErrorIs(t, err, decompose.ErrDecision)

	// A tool with side effects is refused.
	ex, err = executor.New(executor.WithTools(calcTool(categories.FileWrite)),
		executor.WithPolicy(categories.Policy{Categories: []categories.Category{categories.FileWrite}}))
	require.NoError(t, err)
	_, err = decompose.Solve(context.Background(), fam, multiply.Generate(3, 4, 3), decompose.Config{Models: models, Executor: ex})
	assert.ErrorIs(t, err, decompose.ErrConfig)
	assert.True(t, strings.Contains(err.Error(), "read-only"), err)
}
