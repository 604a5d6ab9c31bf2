package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/mdap-go/mdap/maker/models"
)

// noteToolsRefused adds advice to a run that a server stopped because it
// takes no native tools for the model (models.ErrToolsUnsupported):
// declare them in the prompt instead. A worker's error reaches a run over
// --nats as its text only (cluster.ErrRemote), so there the sentinel is
// known by its words.
func noteToolsRefused(w io.Writer, err *error) {
	e := *err
	if errors.Is(e, models.ErrToolsUnsupported) ||
		errors.Is(e, cluster.ErrRemote) && strings.Contains(e.Error(), models.ErrToolsUnsupported.Error()) {
		fmt.Fprintln(w, "maker: note: the server takes no native tool declarations for this model; run again with --tool-declaration prompt")
	}
}
