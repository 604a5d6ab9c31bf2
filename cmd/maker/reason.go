package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/mdap-go/mdap/maker/models"
)

// noteToolsRefused adds advice to a run that a server stopped because it
// takes no native tools for the model (models.ErrToolsUnsupported, which
// a worker's error over --nats carries too): declare them in the prompt
// instead.
func noteToolsRefused(w io.Writer, err *error) {
	if errors.Is(*err, models.ErrToolsUnsupported) {
		fmt.Fprintln(w, "maker: note: the server takes no native tool declarations for this model; run again with --tool-declaration prompt")
	}
}
