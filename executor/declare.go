package executor

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"

	"github.com/tmc/langchaingo/llms"
)

// Parameters of a declared tool are a decoded map[string]any, not a
// json.RawMessage: the OpenAI, Anthropic, Mistral and Bedrock clients
// marshal either form alike, but the Google AI clients accept only a map.

// fallbackParams is the schema of a tool that the history calls but that
// has no schema of its own.
func fallbackParams() map[string]any { return map[string]any{"type": "object"} }

// Declare builds the tool list to send to a model.
//
// For each name of declared, in order and once each, the schema is
// dir's tools/NAME.json, sent as the function's parameters, and the
// description is the "description" key of the front matter of dir's
// skills/NAME.md (empty when the file, its front matter or the key is
// missing). A declared name without a schema file is dropped.
//
// Then every tool that the history calls (the names of llms.ToolCall and
// llms.ToolCallResponse parts), and that is not declared yet, is added
// once each in order of first appearance, with its schema file if there is
// one and {"type":"object"} otherwise: a provider refuses a history that
// names undeclared tools. Declaring is not permitting: the executor checks
// every call again.
//
// A nil dir has no files. Errors: [ErrBadSchema] when a schema file exists
// but is not a JSON object or does not compile; [ErrBadSkill] when a skill
// file's front matter does not parse; [ErrBadTool] for a declared name that
// cannot be a file name (empty, with a slash, "." or ".."); every message
// names the file. Cost: two file reads per name.
func Declare(declared []string, dir fs.FS, history []llms.MessageContent) ([]llms.Tool, error) {
	var out []llms.Tool
	seen := map[string]bool{}
	for _, name := range declared {
		if seen[name] {
			continue
		}
		if !fileName(name) {
			return nil, fmt.Errorf("%w: declared tool name %q cannot name a file under tools/", ErrBadTool, name)
		}
		params, ok, err := readSchemaFile(dir, name)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		desc, err := readSkillDescription(dir, name)
		if err != nil {
			return nil, err
		}
		seen[name] = true
		out = append(out, functionTool(name, desc, params))
	}
	for _, name := range HistoryTools(history) {
		if seen[name] {
			continue
		}
		seen[name] = true
		params, desc := fallbackParams(), ""
		if fileName(name) {
			p, ok, err := readSchemaFile(dir, name)
			if err != nil {
				return nil, err
			}
			if ok {
				params = p
			}
			if desc, err = readSkillDescription(dir, name); err != nil {
				return nil, err
			}
		}
		out = append(out, functionTool(name, desc, params))
	}
	return out, nil
}

// Tools declares this executor's tools from their own Schema and
// Description: the loaded ones (registered and allowed by the policy, in
// taxonomy order), then the index tool, then every other tool that the
// history calls, once each, with its registered schema if it has one and
// {"type":"object"} otherwise. Withheld tools are not declared unless the
// history calls them. Cost: one map copy of each schema.
func (e *Executor) Tools(history []llms.MessageContent) []llms.Tool {
	var out []llms.Tool
	seen := map[string]bool{}
	add := func(name string) {
		seen[name] = true
		if reg := e.lookup(name); reg != nil {
			out = append(out, functionTool(name, reg.tool.Description(), cloneMap(reg.params)))
			return
		}
		out = append(out, functionTool(name, "", fallbackParams()))
	}
	for _, name := range e.Loaded() {
		add(name)
	}
	for _, name := range HistoryTools(history) {
		if !seen[name] {
			add(name)
		}
	}
	return out
}

// HistoryTools returns the tool names that a conversation's tool calls
// and tool responses name, in order of first appearance, once each.
func HistoryTools(history []llms.MessageContent) []string {
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
		return nil, false, fmt.Errorf("%w: %s: %v", ErrBadSchema, file, unwrapPath(err))
	}
	_, _, params, err := compileSchema(name, b)
	if err != nil {
		return nil, false, fmt.Errorf("%w: %s: %v", ErrBadSchema, file, err)
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
		return "", fmt.Errorf("%w: %s: %v", ErrBadSkill, file, unwrapPath(err))
	}
	fm, err := FrontMatter(b)
	if err != nil {
		return "", fmt.Errorf("%w: %s: %v", ErrBadSkill, file, err)
	}
	return fm["description"], nil
}

// FrontMatter parses the front matter of a Markdown file: the lines
// between a first line "---" and the next "---" (or "..."). It returns nil
// and no error when the file does not start with "---".
//
// It reads top-level "key: value" lines only, which is all a skill's
// front matter needs (name, description), rather than take a YAML
// dependency for one key. Values may be plain (a trailing " #" comment is
// dropped; indented lines that follow continue the value, joined by
// spaces), double-quoted (with JSON/Go escapes), single-quoted (two single
// quotes stand for one), or block scalars (| keeps line breaks, > folds them; chomping
// indicators are accepted and the result has no final newline). Indented
// lines and "- " items under a key with an empty value (nested YAML) are
// skipped; blank lines and "#" comments are ignored.
//
// Errors: the front matter is not closed; a top-level line is not "key:
// value"; a key repeats; a quoted value is not closed or has a bad escape.
// Every error names the line.
func FrontMatter(b []byte) (map[string]string, error) {
	text := strings.ReplaceAll(string(bytes.TrimPrefix(b, []byte("\ufeff"))), "\r\n", "\n")
	lines := strings.Split(text, "\n")
	if len(lines) == 0 || strings.TrimRight(lines[0], " \t") != "---" {
		return nil, nil
	}
	end := -1
	for i := 1; i < len(lines); i++ {
		if l := strings.TrimRight(lines[i], " \t"); l == "---" || l == "..." {
			end = i
			break
		}
	}
	if end < 0 {
		return nil, errors.New("front matter opened by --- on line 1 is never closed by ---")
	}
	out := map[string]string{}
	var key string  // the last key, for continuation lines
	var plain bool  // its value is plain and non-empty, so indented lines continue it
	var nested bool // its value is empty: indented lines are nested YAML, skipped
	for i := 1; i < end; i++ {
		line, n := lines[i], i+1
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		if line[0] == ' ' || line[0] == '\t' || strings.HasPrefix(line, "- ") || line == "-" {
			switch {
			case plain:
				out[key] += " " + stripComment(trimmed)
			case nested:
			default:
				return nil, fmt.Errorf("line %d: indented or list line %q belongs to no key", n, trimmed)
			}
			continue
		}
		k, v, ok := strings.Cut(line, ":")
		k = strings.TrimSpace(k)
		if !ok || k == "" || (v != "" && v[0] != ' ' && v[0] != '\t') {
			return nil, fmt.Errorf("line %d: want \"key: value\", got %q", n, line)
		}
		if _, dup := out[k]; dup {
			return nil, fmt.Errorf("line %d: key %q appears twice", n, k)
		}
		v = strings.TrimSpace(v)
		key, plain, nested = k, false, false
		switch {
		case v == "":
			nested = true
			out[k] = ""
		case v[0] == '"':
			s, err := unquoteDouble(v)
			if err != nil {
				return nil, fmt.Errorf("line %d: key %q: %v", n, k, err)
			}
			out[k] = s
		case v[0] == '\'':
			s, err := unquoteSingle(v)
			if err != nil {
				return nil, fmt.Errorf("line %d: key %q: %v", n, k, err)
			}
			out[k] = s
		case v[0] == '|' || v[0] == '>':
			if strings.Trim(stripComment(v)[1:], "+-0123456789") != "" {
				return nil, fmt.Errorf("line %d: key %q: bad block scalar header %q", n, k, v)
			}
			var block []string
			for i+1 < end && (strings.TrimSpace(lines[i+1]) == "" || lines[i+1][0] == ' ' || lines[i+1][0] == '\t') {
				i++
				block = append(block, lines[i])
			}
			out[k] = blockScalar(block, v[0] == '>')
		default:
			out[k] = stripComment(v)
			plain = true
		}
	}
	return out, nil
}

// stripComment drops a " #" comment from a plain value.
func stripComment(v string) string {
	if i := strings.Index(v, " #"); i >= 0 {
		v = v[:i]
	}
	return strings.TrimSpace(v)
}

func unquoteDouble(v string) (string, error) {
	// Find the closing quote, skipping escaped characters.
	for i := 1; i < len(v); i++ {
		switch v[i] {
		case '\\':
			i++
		case '"':
			if rest := strings.TrimSpace(v[i+1:]); rest != "" && !strings.HasPrefix(rest, "#") {
				return "", fmt.Errorf("text %q after the closing quote", rest)
			}
			var s string
			if err := json.Unmarshal([]byte(v[:i+1]), &s); err != nil {
				u, uerr := strconv.Unquote(v[:i+1])
				if uerr != nil {
					return "", fmt.Errorf("bad escape in %s", v[:i+1])
				}
				s = u
			}
			return s, nil
		}
	}
	return "", fmt.Errorf("double-quoted value %s is not closed", v)
}

func unquoteSingle(v string) (string, error) {
	var b strings.Builder
	for i := 1; i < len(v); i++ {
		if v[i] != '\'' {
			b.WriteByte(v[i])
			continue
		}
		if i+1 < len(v) && v[i+1] == '\'' {
			b.WriteByte('\'')
			i++
			continue
		}
		if rest := strings.TrimSpace(v[i+1:]); rest != "" && !strings.HasPrefix(rest, "#") {
			return "", fmt.Errorf("text %q after the closing quote", rest)
		}
		return b.String(), nil
	}
	return "", fmt.Errorf("single-quoted value %s is not closed", v)
}

// blockScalar joins a block scalar's lines after removing their common
// indentation: with line breaks (|) or folded into spaces (>), where a
// blank line stays a line break.
func blockScalar(lines []string, fold bool) string {
	indent := -1
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		n := len(l) - len(strings.TrimLeft(l, " \t"))
		if indent < 0 || n < indent {
			indent = n
		}
	}
	var parts []string
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			parts = append(parts, "")
			continue
		}
		parts = append(parts, strings.TrimRight(l[indent:], " \t"))
	}
	for len(parts) > 0 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	if !fold {
		return strings.Join(parts, "\n")
	}
	var b strings.Builder
	for i, p := range parts {
		if i > 0 {
			if p == "" {
				b.WriteString("\n")
				continue
			}
			if parts[i-1] != "" {
				b.WriteString(" ")
			}
		}
		b.WriteString(p)
	}
	return b.String()
}

func cloneMap(m map[string]any) map[string]any {
	b, err := json.Marshal(m)
	if err != nil {
		return m
	}
	var out map[string]any
	if json.Unmarshal(b, &out) != nil {
		return m
	}
	return out
}
