package main

import (
	"github.com/mdap-go/mdap/categories"
	"github.com/mdap-go/mdap/categories/selection"
	"github.com/mdap-go/mdap/executor"
	"github.com/mdap-go/mdap/executor/fstools"
	"github.com/mdap-go/mdap/executor/toolreport"
	"github.com/mdap-go/mdap/maker"
	"github.com/spf13/cobra"
)

// toolFlags are the flags of every command that can run tools.
type toolFlags struct {
	selection string
	root      string
}

// register adds --tools and --root and, for a command that runs a spec's
// tools, --tool-declaration into declared (nil: none).
func (t *toolFlags) register(cmd *cobra.Command, defaultRoot string, declared *maker.ToolDeclaration) {
	cmd.Flags().StringVar(&t.selection, "tools", "", "allowed tool categories and tools, comma-separated (e.g. file_read,search,grep; -NAME denies; read_only; none); default: the read-only categories")
	cmd.Flags().StringVar(&t.root, "root", defaultRoot, "folder the file tools work in; they cannot leave it")
	if declared != nil {
		cmd.Flags().StringVar((*string)(declared), "tool-declaration", string(maker.DeclareAuto), "how a spec's tools are declared to the model: native (the provider's tool definitions), prompt (their names and arguments in the system prompt), both, or auto (native for openai: and anthropic:, else prompt)")
	}
}

// parseTools is the policy of a --tools selection; a bad one is a usage
// error.
func parseTools(list string) (categories.Policy, error) {
	policy, err := selection.Parse(categories.Builtin(), list)
	if err != nil {
		return policy, usageErr("--tools: %w", err)
	}
	return policy, nil
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
			r := toolreport.Of(e)
			if !asJSON {
				return r.WriteText(cmd.OutOrStdout())
			}
			return writeJSON(cmd.OutOrStdout(), r)
		},
	}
	flags.register(cmd, ".", nil)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	return cmd
}
