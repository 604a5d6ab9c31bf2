package main

import (
	"fmt"
	"io"
	"strings"
)

// noteToolsRefused adds advice to a run that a server stopped because it
// takes no native tools for the model (Ollama: "does not support
// tools"): declare them in the prompt instead.
func noteToolsRefused(w io.Writer, err *error) {
	if *err != nil && strings.Contains((*err).Error(), "does not support tools") {
		fmt.Fprintln(w, "maker: note: the server takes no native tool declarations for this model; run again with --tool-declaration prompt")
	}
}
