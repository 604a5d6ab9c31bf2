package mcpserver

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/mdap-go/mdap/internal/secrets"
	"github.com/mdap-go/mdap/maker/models"
	"github.com/mdap-go/mdap/maker/models/credentials"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// heldKeys are the secrets the server's models may send: the API keys
// of the environment and of its Models' ;key=VAR, and the password of
// each server URL (baseURL, a Models' ;base=, the environment's), as
// credentials.Of finds them, each as it is and JSON-escaped, longest
// first (a key that holds another is replaced whole). Keys under 4 bytes
// are left out: they would redact ordinary text.
func heldKeys(baseURL string, specs []string) secrets.Set {
	return secrets.New(credentials.Of(models.Options{BaseURL: baseURL}, specs...)...)
}

// redact returns b with every key replaced, and whether it held one.
var redact = secrets.Set.Redact

// redactingResults is the server's receiving middleware that keeps the
// keys it holds out of its answers: a tool's result (its text, its
// structured output) and a protocol error. A model server may echo a key
// it refused in its error message, which a sample's error and so a result
// carry to the client. The structured output is redacted in the JSON the
// SDK encoded, with no second encoding unless it holds a key.
func redactingResults(keys secrets.Set) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if r, ok := res.(*mcp.CallToolResult); ok && r != nil {
				redactResult(keys, r)
			}
			return res, redactError(keys, err)
		}
	}
}

// redactingNotes is the server's sending middleware that keeps the keys
// it holds out of each progress notification's message ("sample 0: the
// model call failed: ..." carries a sample's error).
func redactingNotes(keys secrets.Set) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if p, ok := req.GetParams().(*mcp.ProgressNotificationParams); ok && p != nil {
				p.Message, _ = keys.RedactString(p.Message)
			}
			return next(ctx, method, req)
		}
	}
}

// redactResult removes the keys from a tool's result, in place.
func redactResult(keys secrets.Set, res *mcp.CallToolResult) {
	switch sc := res.StructuredContent.(type) {
	case nil:
	case json.RawMessage: // what the SDK's typed tools send
		b, _, _ := keys.RedactJSON(sc)
		res.StructuredContent = json.RawMessage(b)
	default:
		if b, err := json.Marshal(sc); err == nil {
			if b, found, _ := keys.RedactJSON(b); found {
				res.StructuredContent = json.RawMessage(b)
			}
		}
	}
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			tc.Text, _ = keys.RedactString(tc.Text)
		}
	}
}

// redactError removes the keys from a protocol error's message and data.
func redactError(keys secrets.Set, err error) error {
	if err == nil {
		return nil
	}
	var we *jsonrpc.Error
	if errors.As(err, &we) {
		msg, fm := keys.RedactString(we.Message)
		data, fd, _ := keys.RedactJSON(we.Data)
		if fm || fd {
			return &jsonrpc.Error{Code: we.Code, Message: msg, Data: data}
		}
		return err
	}
	if msg, found := keys.RedactString(err.Error()); found {
		return errors.New(msg)
	}
	return err
}
