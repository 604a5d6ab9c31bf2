package main

import (
	"encoding/json"
	"errors"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/replyfile"
	"github.com/mdap-go/mdap/maker/spec"
	"github.com/spf13/cobra"
)

// parseFlags are maker parse's flags.
type parseFlags struct {
	asJSON    bool
	maxTokens int
	specPath  string
}

func newParse() *cobra.Command {
	f := &parseFlags{}
	cmd := &cobra.Command{
		Use:     "parse [FILE...]",
		Short:   "For each model reply: its red flag, or its canonical form and vote key",
		Long:    help("parse"),
		Example: example("parse"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.parse(cmd, args)
		},
	}
	cmd.Flags().BoolVar(&f.asJSON, "json", false, "one JSON line per reply")
	cmd.Flags().IntVar(&f.maxTokens, "max-tokens", maker.DefaultMaxTokens, "reply cap in tokens; a longer reply is red-flagged")
	cmd.Flags().StringVar(&f.specPath, "spec", "", "check answers against this spec file's answer contract")
	return cmd
}

// parse judges each reply of args (stdin with none) and prints the
// verdicts; a reply that cannot be read is bad input and nothing is
// printed.
func (f *parseFlags) parse(cmd *cobra.Command, args []string) error {
	if f.maxTokens < 1 || f.maxTokens > maker.MaxReplyBytes {
		return usageErr("--max-tokens %d: use 1 to %d", f.maxTokens, maker.MaxReplyBytes)
	}
	var task maker.Task // the spec's, whose matcher groups the answers
	if f.specPath != "" {
		sp, err := spec.Load(f.specPath)
		if err != nil {
			return usageErr("--spec: %w", err)
		}
		task = spec.New(sp)
	}
	if len(args) == 0 {
		args = []string{"-"}
	}
	lines, err := replyfile.Judge(cmd.Context(), args, cmd.InOrStdin(), task, f.maxTokens)
	switch {
	case errors.Is(err, replyfile.ErrUnreadable):
		return usageErr("%w", err)
	case err != nil:
		return err
	case f.asJSON:
		enc := json.NewEncoder(cmd.OutOrStdout())
		for _, l := range lines {
			if err := enc.Encode(l); err != nil {
				return failed(err)
			}
		}
	default:
		replyfile.WriteText(cmd.OutOrStdout(), lines, f.maxTokens)
	}
	return nil
}
