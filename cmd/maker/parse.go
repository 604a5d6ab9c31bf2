package main

import (
	"encoding/json"
	"errors"

	"github.com/mdap-go/mdap/internal/flagbind"
	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/replyfile"
	"github.com/mdap-go/mdap/maker/spec"
	"github.com/spf13/cobra"
)

// parseFlags are maker parse's flags (flagbind).
type parseFlags struct {
	JSON      bool   `flag:"json" usage:"one JSON line per reply"`
	MaxTokens int    `flag:"max-tokens" usage:"reply cap in tokens; a longer reply is red-flagged"`
	SpecPath  string `flag:"spec" usage:"check answers against this spec file's answer contract"`
}

func newParse() *cobra.Command {
	f := &parseFlags{MaxTokens: maker.DefaultMaxTokens}
	cmd := &cobra.Command{
		Use:     "parse [FILE...]",
		Short:   "For each model reply: its red flag, or its canonical form and vote key",
		Long:    help("parse"),
		Example: example("parse"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.parse(cmd, args)
		},
	}
	flagbind.Bind(cmd.Flags(), f)
	return cmd
}

// parse judges each reply of args (stdin with none) and prints the
// verdicts; a reply that cannot be read is bad input and nothing is
// printed.
func (f *parseFlags) parse(cmd *cobra.Command, args []string) error {
	if f.MaxTokens < 1 || f.MaxTokens > maker.MaxReplyBytes {
		return usageErr("--max-tokens %d: use 1 to %d", f.MaxTokens, maker.MaxReplyBytes)
	}
	var task maker.Task // the spec's, whose matcher groups the answers
	if f.SpecPath != "" {
		sp, err := spec.Load(f.SpecPath)
		if err != nil {
			return usageErr("--spec: %w", err)
		}
		task = spec.New(sp)
	}
	if len(args) == 0 {
		args = []string{"-"}
	}
	lines, err := replyfile.Judge(cmd.Context(), args, cmd.InOrStdin(), task, f.MaxTokens)
	switch {
	case errors.Is(err, replyfile.ErrUnreadable):
		return usageErr("%w", err)
	case err != nil:
		return err
	case f.JSON:
		enc := json.NewEncoder(cmd.OutOrStdout())
		for _, l := range lines {
			if err := enc.Encode(l); err != nil {
				return failed(err)
			}
		}
	default:
		replyfile.WriteText(cmd.OutOrStdout(), lines, f.MaxTokens)
	}
	return nil
}
