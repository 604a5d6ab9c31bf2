package mcpserver

import (
	"fmt"
	"os"

	"github.com/mdap-go/mdap/internal/fielderr"
	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/models"
	"github.com/mdap-go/mdap/vote"
)

// Upper bounds of Config's request bounds, against typos: a margin, the
// samples of one race, one request's bytes. MinRequestBytes is the
// smallest MaxRequestBytes (a request must hold an initialize message).
const (
	LimitMaxK            = vote.MaxK
	LimitMaxSamples      = vote.MaxSamples
	MinRequestBytes      = 1 << 10
	LimitMaxRequestBytes = 1 << 30
)

// configName is where Config's field errors come from.
const configName = "mcpserver.Config"

// Validate checks c as New would serve it and returns nil or a
// *maker.FieldError (wrapping ErrConfig) naming the first refused field,
// its value and the fix: a model spec of a wrong form ("Models[1]"), a
// BaseURL that is not http(s)://HOST, a ToolDeclaration that is not one
// of maker's, a negative Timeout or bound, a MaxK above LimitMaxK, a
// MaxSamples above LimitMaxSamples or below a MaxK also given (a request
// at that k could never be decided; a request's own k is checked
// against MaxSamples when it comes), a
// MaxRequestBytes outside MinRequestBytes to LimitMaxRequestBytes, a Root
// that is not a folder, or Sim settings sim.Config.Validate refuses (its
// own field error, "sim.Config"). A command maps the field names to its
// flags (maker mcp does). It makes no network call; cost: one stat of
// Root.
func (c Config) Validate() error {
	for i, m := range c.Models {
		if err := models.CheckSpec(m); err != nil {
			return fielderr.Of(configName, fmt.Sprintf("Models[%d]", i), m, err)
		}
	}
	if c.BaseURL != "" {
		if err := models.CheckBaseURL("", c.BaseURL); err != nil {
			return fielderr.Of(configName, "BaseURL", c.BaseURL, err)
		}
	}
	if _, err := maker.ParseToolDeclaration(string(c.ToolDeclaration)); err != nil {
		return fielderr.Of(configName, "ToolDeclaration", string(c.ToolDeclaration), err)
	}
	if err := c.validateBounds(); err != nil {
		return err
	}
	if c.Sim.P != 0 {
		if err := c.Sim.Validate(); err != nil {
			return err
		}
	}
	if c.Root != "" {
		if fi, err := os.Stat(c.Root); err != nil || !fi.IsDir() {
			return fielderr.New(configName, "Root", c.Root, "not a folder; name an existing folder")
		}
	}
	return nil
}

// validateBounds checks the timeout and the request bounds.
func (c Config) validateBounds() error {
	bad := func(name string, v any, fix string) error { return fielderr.New(configName, name, v, fix) }
	switch {
	case c.Timeout < 0:
		return bad("Timeout", c.Timeout, "must be a positive duration such as 30s or 2m")
	case c.MaxK < 0 || c.MaxK > LimitMaxK:
		return bad("MaxK", c.MaxK, fmt.Sprintf("use 1 to %d", LimitMaxK))
	case c.MaxSamples < 0 || c.MaxSamples > LimitMaxSamples:
		return bad("MaxSamples", c.MaxSamples, fmt.Sprintf("use 1 to %d", LimitMaxSamples))
	case c.MaxSamples != 0 && c.MaxSamples < c.MaxK:
		return bad("MaxSamples", c.MaxSamples, fmt.Sprintf("must be at least the largest k (%d), or a race at that k could never be decided", c.MaxK))
	case c.MaxRequestBytes != 0 && (c.MaxRequestBytes < MinRequestBytes || c.MaxRequestBytes > LimitMaxRequestBytes):
		return bad("MaxRequestBytes", c.MaxRequestBytes, fmt.Sprintf("use %d to %d", MinRequestBytes, LimitMaxRequestBytes))
	case c.MaxCandidates < 0:
		return bad("MaxCandidates", c.MaxCandidates, "use 1 or more, or 0 for the default")
	case c.MaxMessages < 0:
		return bad("MaxMessages", c.MaxMessages, "use 1 or more, or 0 for the default")
	case c.MaxSteps < 0:
		return bad("MaxSteps", c.MaxSteps, "use 1 or more, or 0 for the default")
	}
	return nil
}
