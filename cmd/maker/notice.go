package main

import (
	"fmt"
	"io"
	"log/slog"

	"github.com/mdap-go/mdap/maker/observe"
	"github.com/spf13/cobra"
)

// notice writes a message for the person at the terminal on w: text, or,
// under --log-format json, an INFO record of msg and attrs, so that every
// stderr line stays a JSON record. The text is written as given.
func notice(cmd *cobra.Command, w io.Writer, text, msg string, attrs ...any) {
	if jsonLogs(cmd, nil) {
		slog.New(slog.NewJSONHandler(w, nil)).Info(msg, attrs...)
		return
	}
	fmt.Fprint(w, text)
}

// jsonLogs reports whether cmd runs with --log-format json. Before cobra
// parsed the flags (a flag error), args are read as given.
func jsonLogs(cmd *cobra.Command, args []string) bool {
	if cmd != nil {
		if lf := cmd.Flags().Lookup("log-format"); lf != nil && lf.Changed {
			return lf.Value.String() == observe.LogJSON
		}
	}
	for i, a := range args {
		switch {
		case a == "--":
			return false
		case a == "--log-format=json", a == "--log-format" && i+1 < len(args) && args[i+1] == observe.LogJSON:
			return true
		}
	}
	return false
}
