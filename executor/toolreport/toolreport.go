// Package toolreport is what an executor has, as `maker tools` reports
// it: the categories' inventory (loaded, withheld, unavailable) and each
// tool's description, arguments and JSON Schema.
package toolreport

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/mdap-go/mdap/categories"
	"github.com/mdap-go/mdap/executor"
)

// Tool is one tool's description, arguments and JSON Schema.
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Arguments   []executor.Arg  `json:"arguments"`
	Schema      json.RawMessage `json:"schema"`
}

// Report is the inventory of an executor's tools, and every tool's
// arguments with its schema; its JSON is `maker tools --json`.
type Report struct {
	categories.Inventory
	Tools []Tool `json:"tools"`
}

// Of reports e: its inventory, then every tool it has registered (loaded
// or withheld by its policy) in registration order, then the index tool
// (categories.IndexTool). Cost: one description and schema per tool.
func Of(e *executor.Executor) Report {
	r := Report{Inventory: e.Inventory()}
	for _, name := range append(e.Registered(), categories.IndexTool) {
		args, _ := e.ToolArgs(name)
		sch, _ := e.ToolSchema(name)
		r.Tools = append(r.Tools, Tool{Name: name, Description: e.Describe(name), Arguments: args, Schema: sch})
	}
	return r
}

// WriteText writes r for a person: the inventory's text, then each tool
// with one line per argument (executor.ArgLine), or "no arguments".
// Errors: the first write's; later writes' are the writer's to keep.
func (r Report) WriteText(w io.Writer) error {
	if _, err := fmt.Fprint(w, r.Inventory.String()); err != nil {
		return err
	}
	fmt.Fprint(w, "\narguments of the tools this build has (a call names them in \"args\"):\n")
	for _, t := range r.Tools {
		fmt.Fprintf(w, "%s\n", t.Name)
		if len(t.Arguments) == 0 {
			fmt.Fprint(w, "  no arguments\n")
		}
		for _, a := range t.Arguments {
			fmt.Fprintf(w, "  %s\n", executor.ArgLine(a))
		}
	}
	return nil
}
