package main

import (
	"encoding/json"
	"fmt"

	"github.com/mdap-go/mdap/categories"
	"github.com/mdap-go/mdap/executor"
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

// executor builds the executor the flags describe. Bad flags are usage
// errors.
func (t *toolFlags) executor() (*executor.Executor, error) {
	tax := categories.Builtin()
	policy, err := tax.ParseSelection(t.selection)
	if err != nil {
		return nil, usageErr("--tools: %w", err)
	}
	e, err := executor.New(t.root, executor.WithTaxonomy(tax), executor.WithPolicy(policy))
	if err != nil {
		return nil, usageErr("--root: %w", err)
	}
	return e, nil
}

func newTools() *cobra.Command {
	var (
		flags  toolFlags
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "tools",
		Short: "The tool categories and what is loaded, withheld or unavailable",
		Long: `tools prints every tool category, whether it is read-only, and the state of each
tool under the --tools selection: loaded (a call may run), withheld (this build
has it, the selection did not allow it) or unavailable (this build cannot run
it). The same report is what a model gets from the list_tool_categories tool.`,
		Example: "  maker tools\n  maker tools --tools read_only,write_file --json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			e, err := flags.executor()
			if err != nil {
				return err
			}
			defer e.Close()
			r := e.Inventory()
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				if err := enc.Encode(r); err != nil {
					return failed(err)
				}
				return nil
			}
			_, err = fmt.Fprint(cmd.OutOrStdout(), r.String())
			return err
		},
	}
	flags.register(cmd, ".")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	return cmd
}
