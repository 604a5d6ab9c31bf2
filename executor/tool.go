package executor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/mdap-go/mdap/categories"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Tool is something a microagent can propose to call. Implementations must
// be safe for concurrent use: an [Executor] may run the same tool from
// several goroutines.
type Tool interface {
	// Name is the tool's name as a model calls it, for example
	// "read_file". It must be accepted by [categories.Taxonomy.Add]: not
	// empty, no spaces or commas, not a category's name, not
	// [categories.IndexTool].
	Name() string
	// Category is the tool's category; it decides whether a policy allows
	// the tool and whether the tool is read-only.
	Category() categories.Category
	// Description says what the tool does, for the model.
	Description() string
	// Schema is the JSON Schema (draft 2020-12 unless it says otherwise
	// with $schema) of the tool's arguments, a JSON object. It is compiled
	// once, when the tool is registered. External $refs are refused.
	Schema() json.RawMessage
	// Run performs the call. args have been healed and validated against
	// Schema; they hold decoded JSON: map[string]any, []any, string,
	// json.Number, bool or nil ([DecodeArgs] decodes them into a struct).
	// Run must honour ctx, which carries the per-call timeout. The string
	// is the result shown to the model; an error becomes a failed
	// observation whose content is the error's message, so word it for a
	// model. Wrap [ErrOutsideRoot], [ErrInvalidPath], [ErrNotRegular] or
	// [ErrInvalidArgs] to make the observation a denial. Call
	// [MarkTruncated] when the result was cut.
	Run(ctx context.Context, args map[string]any) (string, error)
}

// ReadOnlyDeclarer is implemented by a [Tool] of category
// [categories.MCP] whose server declared it read-only. Register then adds
// it to the taxonomy with [categories.Taxonomy.AddMCP](name, true). It is
// ignored for tools of other categories, which take their category's
// nature.
type ReadOnlyDeclarer interface {
	DeclaredReadOnly() bool
}

// NewTool returns a [Tool] made of its parts; run is called by Run. The
// schema is checked when the tool is registered, not here.
func NewTool(name string, category categories.Category, description string, schema json.RawMessage,
	run func(ctx context.Context, args map[string]any) (string, error)) Tool {
	return &funcTool{name: name, category: category, description: description, schema: schema, run: run}
}

// ContextBound is implemented by a [Tool] that returns soon after its
// context ends, whatever its arguments (every loop in it checks the context
// or is bounded by construction), as the built-in file tools of
// executor/fstools do. When RunsInline reports true, Execute runs the tool
// on the caller's goroutine instead of a goroutine of its own, and never
// abandons it ([WithMaxAbandoned] does not count it). A tool that says so
// and then ignores its context holds Execute past its timeout.
type ContextBound interface {
	RunsInline() bool
}

// funcTool is the Tool of NewTool.
type funcTool struct {
	name        string
	category    categories.Category
	description string
	schema      json.RawMessage
	run         func(context.Context, map[string]any) (string, error)
}

func (t *funcTool) Name() string                  { return t.name }
func (t *funcTool) Category() categories.Category { return t.category }
func (t *funcTool) Description() string           { return t.description }
func (t *funcTool) Schema() json.RawMessage       { return t.schema }
func (t *funcTool) Run(ctx context.Context, args map[string]any) (string, error) {
	return t.run(ctx, args)
}

// DecodeArgs decodes a tool's arguments into v (a pointer, usually to a
// struct with json tags) by a JSON round trip. Its error wraps
// [ErrInvalidArgs]. Cost: one marshal and one unmarshal of args.
func DecodeArgs(args map[string]any, v any) error {
	b, err := json.Marshal(args)
	if err == nil {
		err = json.Unmarshal(b, v)
	}
	if err != nil {
		return refusef(ErrInvalidArgs, "%v", err)
	}
	return nil
}

type truncKey struct{}

// MarkTruncated records, from inside [Tool.Run], that the tool cut its
// output (a read cap, a result limit); the observation then says
// Truncated. The tool should also say so in its text. Outside a call
// (a ctx that no Executor made) it does nothing. Safe for concurrent use.
func MarkTruncated(ctx context.Context) {
	if f, ok := ctx.Value(truncKey{}).(*atomic.Bool); ok {
		f.Store(true)
	}
}

// registered is a tool with its compiled schema.
type registered struct {
	tool   Tool
	entry  categories.Entry
	schema *jsonschema.Schema
	doc    any            // the schema decoded with UseNumber, for healing and hints
	params map[string]any // the schema decoded plainly, for llms.FunctionDefinition
	inline bool           // a ContextBound tool: run on the caller's goroutine
}

// Register adds t to the executor and, if the taxonomy does not know t's
// name yet, to the taxonomy. It compiles t's schema once.
//
// Errors: [ErrInvalidTool] for a nil tool, the index tool's name or a name or
// category the taxonomy refuses; [ErrDuplicateTool] when a tool of that
// name is already registered here or the taxonomy places the name in
// another category (or, for an MCP tool, with another read-only
// declaration); [ErrInvalidSchema] when the schema is not a JSON object or
// does not compile. On error nothing is registered and the taxonomy is
// unchanged (unless another goroutine changed it). Safe for concurrent use.
func (e *Executor) Register(t Tool) error {
	if t == nil {
		return fmt.Errorf("%w: nil tool", ErrInvalidTool)
	}
	name, cat := t.Name(), t.Category()
	if name == categories.IndexTool {
		return fmt.Errorf("%w: %q is the index tool, which the executor provides itself: %w", ErrInvalidTool, name, categories.ErrReservedName)
	}
	sch, doc, params, err := compileSchema(name, t.Schema())
	if err != nil {
		return fmt.Errorf("%w: tool %q: %v", ErrInvalidSchema, name, err)
	}
	declaredRO := false
	if d, ok := t.(ReadOnlyDeclarer); ok && cat == categories.MCP {
		declaredRO = d.DeclaredReadOnly()
	}

	e.mu.Lock()
	defer e.mu.Unlock()
	if _, dup := e.tools[name]; dup {
		return fmt.Errorf("%w: %q is already registered", ErrDuplicateTool, name)
	}
	entry, known := e.tax.Lookup(name)
	switch {
	case known && entry.Category != cat:
		return fmt.Errorf("%w: the taxonomy places %q in category %s, not %s", ErrDuplicateTool, name, entry.Category, cat)
	case known && entry.DeclaredReadOnly != declaredRO:
		return fmt.Errorf("%w: the taxonomy has MCP tool %q with read-only=%t, the tool declares %t", ErrDuplicateTool, name, entry.DeclaredReadOnly, declaredRO)
	case !known:
		var err error
		if cat == categories.MCP {
			err = e.tax.AddMCP(name, declaredRO)
		} else {
			err = e.tax.Add(name, cat)
		}
		if err != nil {
			sentinel := ErrInvalidTool
			if errors.Is(err, categories.ErrDuplicate) {
				sentinel = ErrDuplicateTool
			}
			return fmt.Errorf("%w: %w", sentinel, err)
		}
		entry, _ = e.tax.Lookup(name)
	}
	cb, bound := t.(ContextBound)
	e.tools[name] = &registered{tool: t, entry: entry, schema: sch, doc: doc, params: params, inline: bound && cb.RunsInline()}
	e.log.Debug("executor: tool registered", "tool", name, "category", string(cat), "read_only", entry.ReadOnly())
	return nil
}
