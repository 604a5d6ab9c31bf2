package mcpserver_test

import (
	"context"
	"fmt"
	"log"

	"github.com/mdap-go/mdap/maker/mcpserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A client that samples on its own tallies its replies with mdap's keys
// and rule: the fenced 1.0 votes with the plain 1, the prose is
// red-flagged, and the answer leads by k = 2 at the third reply (index 2).
func ExampleVote() {
	out, err := mcpserver.Vote(mcpserver.VoteInput{K: 2, Candidates: []mcpserver.Candidate{
		{Text: `{"x": 1}`},
		{Text: "It is probably 1."},
		{Text: "```json\n{\"x\": 1.0}\n```"},
	}}, mcpserver.DefaultMaxK)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(out.Decided, out.Replies[1].Flag, out.Winner.Canonical, out.Winner.DecidedAt)
	// Output: true unparseable {"x":1} 2
}

// A server connected to an SDK client in memory; over stdio, ServeIO
// serves the same tools (cmd/maker's `maker mcp` does it).
func ExampleServer() {
	srv, err := mcpserver.New(mcpserver.Config{})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	ctx := context.Background()
	serverT, clientT := mcp.NewInMemoryTransports()
	ss, err := srv.MCP().Connect(ctx, serverT, nil)
	if err != nil {
		log.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "example"}, nil).Connect(ctx, clientT, nil)
	if err != nil {
		log.Fatal(err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "kmin", Arguments: map[string]any{"steps": 1048575, "p": 0.9978}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.IsError, res.StructuredContent.(map[string]any)["k_min"])
	cs.Close()
	ss.Wait()
	// Output: false 3
}
