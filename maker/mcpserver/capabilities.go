package mcpserver

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// methodSetLevel is the request of the logging capability.
const methodSetLevel = "logging/setLevel"

// onlyDeclared is the server's receiving middleware that answers a
// request of a capability the server does not declare as the method it
// is not: -32601. The SDK answers logging/setLevel whatever the
// capabilities say, and this server declares no logging (it sends the
// client no log messages: its logs go to its own Logger), so a client
// that checks capabilities would see one thing and the server do another.
func onlyDeclared(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == methodSetLevel {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound,
				Message: "Method not found: logging/setLevel; this server does not declare the logging capability (it sends no log messages)"}
		}
		return next(ctx, method, req)
	}
}
