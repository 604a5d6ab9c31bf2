package mcpserver

import (
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// ResourceMetadataPath is where ServeHTTPOn describes the endpoint as a
// protected resource (RFC 9728), both at the path itself and with Path
// appended (RFC 9728 §3.1): the resource (the endpoint's URL as the client
// reached it), a bearer token sent in the Authorization header, and no
// OAuth authorization server. A client following the MCP authorization
// spec finds it from the 401's WWW-Authenticate header and learns that
// the token is one the server's operator hands out (HTTPOptions.Token),
// not one an OAuth flow could obtain. It is public, as RFC 9728 intends:
// it holds nothing but the endpoint's URL.
const ResourceMetadataPath = "/.well-known/oauth-protected-resource"

// ResourceMetadataHandler serves the document at ResourceMetadataPath; a
// caller serving Handler on a mux of its own mounts it there too (at
// ResourceMetadataPath and ResourceMetadataPath+Path) so that the 401's
// resource_metadata link resolves.
func ResourceMetadataHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		md := &oauthex.ProtectedResourceMetadata{
			Resource:               origin(r) + Path,
			BearerMethodsSupported: []string{"header"},
			ResourceName:           "mdap",
		}
		auth.ProtectedResourceMetadataHandler(md).ServeHTTP(w, r)
	})
}

// origin is the scheme and host a request reached the server at.
func origin(r *http.Request) string {
	if r.TLS != nil {
		return "https://" + r.Host
	}
	return "http://" + r.Host
}

// challenge is the WWW-Authenticate value of a 401 (RFC 6750 §3, RFC
// 9728 §5.1): an error code only when the request sent a token (RFC 6750
// §3.1: a request without credentials gets none).
func challenge(r *http.Request) string {
	c := `Bearer realm="mdap", `
	if r.Header.Get("Authorization") != "" {
		c += `error="invalid_token", error_description="not this server's token", `
	}
	return c + `resource_metadata="` + origin(r) + ResourceMetadataPath + Path + `"`
}
