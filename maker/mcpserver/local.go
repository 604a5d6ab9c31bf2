package mcpserver

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/models"
	"github.com/mdap-go/mdap/maker/sim"
)

// LocalConfig is the Config of a local server (maker mcp's defaults): the
// simulated model, the working folder, run_task's journals in
// DefaultStateDir, and the Default bounds written out, which New reads
// as it reads their zero values.
func LocalConfig() Config {
	return Config{Models: []string{"sim"}, Timeout: models.DefaultTimeout, Sim: sim.DefaultConfig(), Root: ".", State: DefaultStateDir(),
		MaxK: DefaultMaxK, MaxSamples: DefaultMaxSamples, MaxRequestBytes: DefaultMaxRequestBytes, ToolDeclaration: maker.DeclareAuto}
}

// DefaultStateDir is where a local server keeps run_task's journals when
// none is named (Config.State): $XDG_STATE_HOME/mdap/journals, else
// ~/.local/state/mdap/journals, else a folder in the temporary folder when
// there is no home. It creates nothing.
func DefaultStateDir() string {
	if d := os.Getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "mdap", "journals")
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".local", "state", "mdap", "journals")
	}
	return filepath.Join(os.TempDir(), "mdap-journals")
}

// NewToken returns a bearer token of 256 random bits from crypto/rand,
// in hex, for an HTTP server started without one (HTTPOptions.Token).
// Its only error is crypto/rand's.
func NewToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generating the HTTP token: %w", err)
	}
	return hex.EncodeToString(b), nil
}
