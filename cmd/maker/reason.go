package main

import (
	"fmt"
	"io"
	"strings"
)

// oneLine folds a multi-line reason (a JSON Schema validation error lists
// each problem on its own indented line) into one line, every problem
// kept, separated by "; ", so --verbose shows it whole on one line that a
// progress bar does not overwrite.
func oneLine(s string) string {
	lines := strings.Split(s, "\n")
	out := lines[:0]
	for _, l := range lines {
		l = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "- "))
		if l != "" {
			out = append(out, l)
		}
	}
	return strings.Join(out, "; ")
}

// noteToolsRefused adds advice to a run that a server stopped because it
// takes no native tools for the model (Ollama: "does not support
// tools"): declare them in the prompt instead.
func noteToolsRefused(w io.Writer, err *error) {
	if *err != nil && strings.Contains((*err).Error(), "does not support tools") {
		fmt.Fprintln(w, "maker: note: the server takes no native tool declarations for this model; run again with --tool-declaration prompt")
	}
}
