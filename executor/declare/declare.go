// Package declare answers "what does this call declare?": the tool list
// sent to a model, from an executor's tools and a folder's schema files
// (tools/NAME.json) and skill files (skills/NAME.md, whose front matter
// carries a description). Declaring is not permitting: the executor checks
// every call again. The step loop does not declare; it sends what it is
// given (maker.Solver.Tools).
package declare

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/mdap-go/mdap/executor"
	"github.com/mdap-go/mdap/internal/frontmatter"
	"github.com/mdap-go/mdap/internal/schema"
	"github.com/tmc/langchaingo/llms"
)

// Parameters of a declared tool are a decoded map[string]any, not a
// json.RawMessage: the OpenAI, Anthropic, Mistral and Bedrock clients
// marshal either form alike, but the Google AI clients accept only a map.

// fallbackParams is the schema of a tool that the history calls but that
// has no schema of its own.
func fallbackParams() map[string]any { return map[string]any{"type": "object"} }

// ErrInvalidSkill: a skill file's front matter given to [Tools] does not
// parse.
var ErrInvalidSkill = errors.New("bad skill front matter")

// Tools answers "what does this call declare?": the tool list to send
// to a model, from one place.
//
// With an executor e, a name of declared is declared when e has the tool
// and its policy allows it (a withheld or unknown name is left out:
// declaring is not permitting, and a model is not told of tools it may
// not call); its parameters are the schema e validates against, and its
// description is the "description" key of the front matter of dir's
// skills/NAME.md when that file says one, else the tool's own
// Description. A schema file dir/tools/NAME.json for such a tool is
// still read and must be valid, so a broken file never passes unseen,
// but e's schema is the one declared: it is the one Execute checks.
//
// With a nil e, the schema of each declared name is dir's
// tools/NAME.json and a name without one is dropped; the description is
// the skill file's, else empty.
//
// Either way, names are taken in order and once each; then every tool
// that the history calls (the names of llms.ToolCall and
// llms.ToolCallResponse parts) and that is not declared yet is added once
// each in order of first appearance, even a withheld one (a provider
// refuses a history that names undeclared tools), with e's schema, else
// its schema file, else {"type":"object"}. Declaring is not permitting:
// the executor checks every call again.
//
// A nil dir has no files. Errors: [executor.ErrInvalidSchema] when a schema
// file exists but is not a JSON object or does not compile;
// [ErrInvalidSkill] when a skill file's front matter does not parse;
// [executor.ErrInvalidTool] for a declared name that cannot be a file name
// (empty, with a slash, "." or ".."); every message names the file. Cost:
// two file reads per name.
func Tools(e *executor.Executor, declared []string, dir fs.FS, history []llms.MessageContent) ([]llms.Tool, error) {
	var out []llms.Tool
	seen := map[string]bool{}
	var allowed map[string]bool
	if e != nil {
		allowed = map[string]bool{}
		for _, name := range e.Loaded() {
			allowed[name] = true
		}
	}
	// describe returns name's declaration from e's tool (if reg is not
	// nil) or the files; ok is false when there is neither.
	describe := func(name string, reg *registered, fallback bool) (llms.Tool, bool, error) {
		params, ok := map[string]any(nil), false
		desc := ""
		if fileName(name) {
			var err error
			if params, ok, err = readSchemaFile(dir, name); err != nil {
				return llms.Tool{}, false, err
			}
			if desc, err = readSkillDescription(dir, name); err != nil {
				return llms.Tool{}, false, err
			}
		}
		if reg != nil {
			params, ok = reg.params, true
			if desc == "" {
				desc = reg.description
			}
		}
		if !ok {
			if !fallback {
				return llms.Tool{}, false, nil
			}
			params = fallbackParams()
		}
		return functionTool(name, desc, params), true, nil
	}
	for _, name := range declared {
		if seen[name] {
			continue
		}
		if !fileName(name) {
			return nil, fmt.Errorf("%w: declared tool name %q cannot name a file under tools/", executor.ErrInvalidTool, name)
		}
		var reg *registered
		if e != nil {
			if !allowed[name] {
				continue
			}
			reg = lookup(e, name)
		}
		tool, ok, err := describe(name, reg, false)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		seen[name] = true
		out = append(out, tool)
	}
	for _, name := range historyTools(history) {
		if seen[name] {
			continue
		}
		seen[name] = true
		var reg *registered
		if e != nil {
			reg = lookup(e, name)
		}
		tool, _, err := describe(name, reg, true)
		if err != nil {
			return nil, err
		}
		out = append(out, tool)
	}
	return out, nil
}

// registered is what e says of one of its tools: its schema, decoded
// plainly (a fresh map each time), and its description.
type registered struct {
	params      map[string]any
	description string
}

// lookup returns e's tool of name (the index tool included), nil for a
// name e does not have.
func lookup(e *executor.Executor, name string) *registered {
	raw, ok := e.ToolSchema(name)
	if !ok {
		return nil
	}
	var params map[string]any
	if json.Unmarshal(raw, &params) != nil {
		return nil // Register accepted only a JSON object
	}
	return &registered{params: params, description: e.Describe(name)}
}

// All declares e's tools from their own Schema and Description: the
// loaded ones (registered and allowed by the policy, in taxonomy order),
// then the index tool, then every other tool that the history calls, once
// each, with its registered schema if it has one and {"type":"object"}
// otherwise. Withheld tools are not declared unless the history calls
// them. Cost: one decoding of each schema.
func All(e *executor.Executor, history []llms.MessageContent) []llms.Tool {
	var out []llms.Tool
	seen := map[string]bool{}
	add := func(name string) {
		seen[name] = true
		if reg := lookup(e, name); reg != nil {
			out = append(out, functionTool(name, reg.description, reg.params))
			return
		}
		out = append(out, functionTool(name, "", fallbackParams()))
	}
	for _, name := range e.Loaded() {
		add(name)
	}
	for _, name := range historyTools(history) {
		if !seen[name] {
			add(name)
		}
	}
	return out
}

// historyTools returns the tool names that a conversation's tool calls
// and tool responses name, in order of first appearance, once each.
func historyTools(history []llms.MessageContent) []string {
	var out []string
	seen := map[string]bool{}
	add := func(name string) {
		if name != "" && !seen[name] {
			seen[name] = true
			out = append(out, name)
		}
	}
	for _, m := range history {
		for _, part := range m.Parts {
			switch p := part.(type) {
			case llms.ToolCall:
				if p.FunctionCall != nil {
					add(p.FunctionCall.Name)
				}
			case *llms.ToolCall:
				if p != nil && p.FunctionCall != nil {
					add(p.FunctionCall.Name)
				}
			case llms.ToolCallResponse:
				add(p.Name)
			case *llms.ToolCallResponse:
				if p != nil {
					add(p.Name)
				}
			}
		}
	}
	return out
}

func functionTool(name, desc string, params map[string]any) llms.Tool {
	return llms.Tool{Type: "function", Function: &llms.FunctionDefinition{Name: name, Description: desc, Parameters: params}}
}

// fileName reports whether name can be the base of tools/NAME.json.
func fileName(name string) bool {
	return name != "" && name != "." && name != ".." && !strings.ContainsAny(name, "/\\\x00") && fs.ValidPath("tools/"+name+".json")
}

// readSchemaFile reads tools/NAME.json. ok is false when it does not exist.
func readSchemaFile(dir fs.FS, name string) (map[string]any, bool, error) {
	if dir == nil {
		return nil, false, nil
	}
	file := "tools/" + name + ".json"
	b, err := fs.ReadFile(dir, file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("%w: %s: %v", executor.ErrInvalidSchema, file, unwrapPath(err))
	}
	params, err := compileSchema(name, b)
	if err != nil {
		return nil, false, fmt.Errorf("%w: %s: %v", executor.ErrInvalidSchema, file, err)
	}
	return params, true, nil
}

// readSkillDescription returns the description of skills/NAME.md's front
// matter, "" when there is none.
func readSkillDescription(dir fs.FS, name string) (string, error) {
	if dir == nil {
		return "", nil
	}
	file := "skills/" + name + ".md"
	b, err := fs.ReadFile(dir, file)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("%w: %s: %v", ErrInvalidSkill, file, unwrapPath(err))
	}
	fm, err := frontmatter.Parse(b)
	if err != nil {
		return "", fmt.Errorf("%w: %s: %v", ErrInvalidSkill, file, err)
	}
	return fm["description"], nil
}

// compileSchema checks raw as the executor checks a tool's schema (a JSON
// object that compiles, external $refs refused) and returns it decoded
// plainly, for providers that need a map.
func compileSchema(name string, raw []byte) (map[string]any, error) {
	doc, err := schema.Decode(raw)
	if err != nil {
		return nil, err
	}
	if _, ok := doc.(map[string]any); !ok {
		return nil, errors.New("not a JSON object")
	}
	var params map[string]any
	if err := json.Unmarshal(raw, &params); err != nil {
		return nil, fmt.Errorf("not JSON: %v", err)
	}
	if _, err := schema.CompileDoc("tools/"+name, doc); err != nil {
		return nil, err
	}
	return params, nil
}

// unwrapPath drops a *fs.PathError's operation and path.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
