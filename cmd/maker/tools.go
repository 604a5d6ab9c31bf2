package main

import (
	"encoding/json"
	"fmt"

	"github.com/mdap-go/mdap/categories"
	"github.com/mdap-go/mdap/executor"
	"github.com/mdap-go/mdap/executor/fstools"
	"github.com/mdap-go/mdap/maker"
	"github.com/spf13/cobra"
)

// toolFlags are the flags of every command that can run tools.
type toolFlags struct {
	selection string
	root      string
}

func (t *toolFlags) register(cmd *cobra.Command, defaultRoot string) {
	cmd.Flags().StringVar(&t.selection, "tools", "", "allowed tool categories and tools, comma-separated (e.g. file_read,search,grep; -NAME denies; read_only; none); default: the read-only categories")
	cmd.Flags().StringVar(&t.root, "root", defaultRoot, "folder the file tools work in; they cannot leave it")
}

// parseTools is the policy of a --tools selection; a bad one is a usage
// error.
func parseTools(selection string) (categories.Policy, error) {
	policy, err := categories.Builtin().ParseSelection(selection)
	if err != nil {
		return policy, usageErr("--tools: %w", err)
	}
	return policy, nil
}

// toolDeclaration is a --tool-declaration choice; a bad one is a usage
// error.
func toolDeclaration(s string) (maker.ToolDeclaration, error) {
	d, err := maker.ParseToolDeclaration(s)
	if err != nil {
		return d, usageErr("--tool-declaration: %w", err)
	}
	return d, nil
}

// executor builds the executor the flags describe. Bad flags are usage
// errors.
func (t *toolFlags) executor() (*executor.Executor, error) {
	policy, err := parseTools(t.selection)
	if err != nil {
		return nil, err
	}
	e, err := fstools.New(t.root, executor.WithTaxonomy(categories.Builtin()), executor.WithPolicy(policy))
	if err != nil {
		return nil, usageErr("--root: %w", err)
	}
	return e, nil
}

// toolArgs is one tool's description, arguments and JSON Schema, in
// maker tools' report.
type toolArgs struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Arguments   []executor.Arg  `json:"arguments"`
	Schema      json.RawMessage `json:"schema"`
}

// toolsReport is maker tools --json: the inventory, and every tool's
// arguments with its schema.
type toolsReport struct {
	categories.Inventory
	Tools []toolArgs `json:"tools"`
}

// toolArguments lists the arguments of every tool e has (loaded or
// withheld), then the index tool's.
func toolArguments(e *executor.Executor) []toolArgs {
	var out []toolArgs
	for _, name := range append(e.Registered(), categories.IndexTool) {
		args, _ := e.ToolArgs(name)
		sch, _ := e.ToolSchema(name)
		out = append(out, toolArgs{Name: name, Description: e.Describe(name), Arguments: args, Schema: sch})
	}
	return out
}

func newTools() *cobra.Command {
	var (
		flags  toolFlags
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:     "tools",
		Short:   "The tool categories and what is loaded, withheld or unavailable",
		Long:    help("tools"),
		Example: example("tools"),
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			e, err := flags.executor()
			if err != nil {
				return err
			}
			defer e.Close()
			r := e.Inventory()
			args := toolArguments(e)
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				if err := enc.Encode(toolsReport{Inventory: r, Tools: args}); err != nil {
					return failed(err)
				}
				return nil
			}
			w := cmd.OutOrStdout()
			if _, err = fmt.Fprint(w, r.String()); err != nil {
				return err
			}
			fmt.Fprint(w, "\narguments of the tools this build has (a call names them in \"args\"):\n")
			for _, t := range args {
				fmt.Fprintf(w, "%s\n", t.Name)
				if len(t.Arguments) == 0 {
					fmt.Fprint(w, "  no arguments\n")
				}
				for _, a := range t.Arguments {
					fmt.Fprintf(w, "  %s\n", executor.ArgLine(a))
				}
			}
			return nil
		},
	}
	flags.register(cmd, ".")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	return cmd
}
