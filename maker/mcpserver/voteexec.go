package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/mdap-go/mdap/categories"
	"github.com/mdap-go/mdap/executor"
	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/inspect"
)

// errNeverRun is what a declared tool would say if it were run: the vote
// tools only judge and key calls.
var errNeverRun = errors.New("a declared tool is never run by the MCP server")

// declaredExecutor is an executor of the declared tools that runs none:
// it gives each proposed call the arguments a run's executor would
// (executor.Normalize: healed against the tool's parameters schema, so
// "paths": "[\"src\"]" and ["src"] are one call; arguments the schema
// refuses are the red flag "invalid arguments"). Nil for no tools.
// Errors wrap ErrArgument: more than maxDeclaredTools, a name twice, a
// parameters schema that is not JSON.
func declaredExecutor(tools []FunctionTool) (*executor.Executor, error) {
	decl, err := declared(tools)
	if err != nil || len(decl) == 0 {
		return nil, err
	}
	tax := categories.Builtin()
	var names []string
	var registered []executor.Tool
	for i, t := range decl {
		schema, err := json.Marshal(t.Function.Parameters)
		if err != nil {
			return nil, fmt.Errorf("%w: tools[%d].function.parameters: %w", ErrArgument, i, err)
		}
		// A standard tool keeps its category; any other is of the mcp
		// category (side effects assumed). The category changes nothing
		// here but the taxonomy's bookkeeping: no tool runs.
		cat := categories.MCP
		if e, ok := tax.Lookup(t.Function.Name); ok {
			cat = e.Category
		} else if err := tax.Add(t.Function.Name, cat); err != nil {
			return nil, fmt.Errorf("%w: tools[%d]: %w", ErrArgument, i, err)
		}
		if slices.Contains(names, t.Function.Name) {
			return nil, fmt.Errorf("%w: tools[%d]: %q is declared twice", ErrArgument, i, t.Function.Name)
		}
		names = append(names, t.Function.Name)
		registered = append(registered, executor.NewTool(t.Function.Name, cat, t.Function.Description, schema,
			func(context.Context, map[string]any) (string, error) { return "", errNeverRun }))
	}
	ex, err := executor.New(executor.WithTaxonomy(tax), executor.WithPolicy(categories.Policy{Allow: names}), executor.WithTools(registered...))
	if err != nil {
		return nil, fmt.Errorf("%w: tools: %w", ErrArgument, err)
	}
	return ex, nil
}

// inspectWith judges a reply as inspect.Reply does, with a tool call's
// arguments normalised by ex when there are declared tools.
func inspectWith(ex *executor.Executor, r maker.Reply, maxTokens int) inspect.Verdict {
	if ex == nil {
		return inspect.Reply(r, maxTokens, maker.FlagRules{}, nil)
	}
	s := &maker.Solver{Config: maker.Config{MaxTokens: maxTokens}, Executor: ex}
	return inspect.In(s, nil, r)
}
