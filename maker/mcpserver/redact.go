package mcpserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"slices"

	"github.com/mdap-go/mdap/maker/models"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// redacted replaces a key the server holds in a tool's result.
const redacted = "[REDACTED]"

// heldKeys are the API keys the server's models may send: the
// environment's and those its Models' ;key=VAR name, longest first (a
// key that holds another is replaced whole). Keys under 4 bytes are left
// out: they would redact ordinary text.
func heldKeys(specs []string) [][]byte {
	var keys [][]byte
	add := func(k string) {
		if len(k) >= 4 {
			keys = append(keys, []byte(k))
		}
	}
	add(os.Getenv(models.EnvOpenAIKey))
	add(os.Getenv(models.EnvAnthropicKey))
	for _, m := range specs {
		if _, o, err := models.SplitEndpoint(m, models.Options{}); err == nil {
			add(o.APIKey)
		}
	}
	slices.SortStableFunc(keys, func(a, b []byte) int { return len(b) - len(a) })
	return keys
}

// redact returns b with every key replaced, and whether it held one.
func redact(keys [][]byte, b []byte) ([]byte, bool) {
	found := false
	for _, k := range keys {
		if bytes.Contains(b, k) {
			b, found = bytes.ReplaceAll(b, k, []byte(redacted)), true
		}
	}
	return b, found
}

// redactResult removes the server's keys from a tool's result: its text,
// its structured output and its error (a model server may echo a key it
// refused in its error message, which a result carries to the client).
func redactResult[Out any](keys [][]byte, res *mcp.CallToolResult, out Out, err error) (*mcp.CallToolResult, Out, error) {
	if len(keys) == 0 {
		return res, out, err
	}
	if res != nil {
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				if b, found := redact(keys, []byte(tc.Text)); found {
					tc.Text = string(b)
				}
			}
		}
	}
	if b, jerr := json.Marshal(out); jerr == nil {
		if b, found := redact(keys, b); found {
			var clean Out
			if json.Unmarshal(b, &clean) == nil {
				out = clean
			}
		}
	}
	if err != nil {
		if b, found := redact(keys, []byte(err.Error())); found {
			err = errors.New(string(b))
		}
	}
	return res, out, err
}
