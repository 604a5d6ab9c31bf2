package executor

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/tmc/langchaingo/llms"
)

// MaxDescribedChars caps each description (a tool's, an argument's) that
// [DescribeTools] and [DescribeArgs] show; a longer one is cut and ends
// with "...".
const MaxDescribedChars = 300

// Arg is one argument of a tool, as [DescribeArgs] reads it from the
// tool's JSON Schema.
type Arg struct {
	// Name is the property's name.
	Name string `json:"name"`
	// Type is the JSON type in words: "string", "integer", "array of
	// string", "string or null", "one of \"a\", \"b\"", or "any".
	Type string `json:"type"`
	// Required is true when the schema lists the property as required.
	Required bool `json:"required"`
	// Description is the property's description, one line, capped at
	// MaxDescribedChars.
	Description string `json:"description,omitempty"`
}

// DescribeArgs lists the arguments a JSON Schema of a tool's arguments
// (an object schema, decoded) declares: required ones first, then the
// others, each group by name, so the order never depends on a map's.
// A schema without "properties" has no arguments it names. Cost: one
// pass over the properties.
func DescribeArgs(params map[string]any) []Arg {
	props, _ := params["properties"].(map[string]any)
	required := func(name string) bool { // "required", decoded or not
		if rs, ok := params["required"].([]any); ok {
			return slices.Contains(rs, any(name))
		}
		rs, _ := params["required"].([]string)
		return slices.Contains(rs, name)
	}
	out := make([]Arg, 0, len(props))
	for name, p := range props {
		m, _ := p.(map[string]any)
		desc, _ := m["description"].(string)
		out = append(out, Arg{Name: name, Type: typeWords(m), Required: required(name), Description: oneLine(desc)})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Required != out[j].Required {
			return out[i].Required
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// typeWords names a property schema's type in a few words.
func typeWords(m map[string]any) string {
	if enum, ok := m["enum"].([]any); ok && len(enum) > 0 {
		vals := make([]string, 0, len(enum))
		for _, v := range enum {
			b, _ := json.Marshal(v)
			vals = append(vals, string(b))
		}
		return "one of " + strings.Join(vals, ", ")
	}
	types := schemaTypes(m)
	if len(types) == 0 {
		return "any"
	}
	for i, t := range types {
		if t == "array" {
			if items, ok := m["items"].(map[string]any); ok {
				types[i] = "array of " + typeWords(items)
			}
		}
	}
	return strings.Join(types, " or ")
}

// oneLine folds white space to single spaces and caps s at
// MaxDescribedChars.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > MaxDescribedChars {
		s = string(r[:MaxDescribedChars-3]) + "..."
	}
	return s
}

// DescribeTools is the compact, stable description of declared tools that
// goes into a prompt for a model without native tools: one line per tool
// (its name and description), then one line per argument (name, type,
// whether required, description), in the order of tools and of
// [DescribeArgs]. The same tools always give the same text. No tools give
// "". Cost: linear in the schemas' size.
func DescribeTools(tools []llms.Tool) string {
	var b strings.Builder
	for _, t := range tools {
		if t.Function == nil {
			continue
		}
		if b.Len() == 0 {
			b.WriteString("Tools you may call, by replying {\"tool_intent\": {\"tool\": NAME, \"args\": {ARGUMENT: VALUE, ...}}} (use exactly these argument names):\n")
		}
		fmt.Fprintf(&b, "- %s", t.Function.Name)
		if d := oneLine(t.Function.Description); d != "" {
			fmt.Fprintf(&b, ": %s", d)
		}
		b.WriteByte('\n')
		args := DescribeArgs(paramsMap(t.Function.Parameters))
		if len(args) == 0 {
			b.WriteString("  no arguments: \"args\": {}\n")
		}
		for _, a := range args {
			fmt.Fprintf(&b, "  %s\n", ArgLine(a))
		}
	}
	return b.String()
}

// ArgLine renders one argument as DescribeTools shows it:
// `path (string, required): file path relative to the root folder`.
func ArgLine(a Arg) string {
	req := ""
	if a.Required {
		req = ", required"
	}
	s := fmt.Sprintf("%s (%s%s)", a.Name, a.Type, req)
	if a.Description != "" {
		s += ": " + a.Description
	}
	return s
}

// paramsMap returns a declared tool's parameters as a decoded map,
// whatever form they were given in (a map, a json.RawMessage, a struct).
func paramsMap(p any) map[string]any {
	if v, ok := p.(map[string]any); ok {
		return v
	}
	var m map[string]any // nil for nil parameters, which marshal to null
	if b, err := json.Marshal(p); err != nil || json.Unmarshal(b, &m) != nil {
		return nil
	}
	return m
}

// ToolArgs returns the arguments of a registered tool (the index tool
// included), from its schema, and false for a name this executor does not
// have.
func (e *Executor) ToolArgs(name string) ([]Arg, bool) {
	reg := e.lookup(name)
	if reg == nil {
		return nil, false
	}
	return DescribeArgs(reg.params), true
}

// ToolSchema returns the JSON Schema of a registered tool's arguments as
// the tool gave it, and false for a name this executor does not have.
func (e *Executor) ToolSchema(name string) (json.RawMessage, bool) {
	reg := e.lookup(name)
	if reg == nil {
		return nil, false
	}
	return slices.Clone(reg.tool.Schema()), true
}

// Describe returns a registered tool's description (the index tool's
// included), "" for a name this executor does not have.
func (e *Executor) Describe(name string) string {
	reg := e.lookup(name)
	if reg == nil {
		return ""
	}
	return reg.tool.Description()
}
