package fstools_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/mdap-go/mdap/executor/fstools"
	"github.com/mdap-go/mdap/intent"
)

func ExampleNew() {
	root, err := os.MkdirTemp("", "mdap-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(root)
	if err := os.WriteFile(filepath.Join(root, "notes.txt"), []byte("first line\nsecond line\n"), 0o644); err != nil {
		panic(err)
	}

	// The default policy is read-only: file_read, search, semantic_search.
	e, err := fstools.New(root)
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	for _, in := range []intent.ToolIntent{
		// "2" arrives as a string; the schema wants an integer, so it heals.
		{Tool: "read_file", Args: map[string]any{"path": "notes.txt", "offset": "2"}},
		{Tool: "read_file", Args: map[string]any{"path": "../etc/passwd"}},
		{Tool: "write_file", Args: map[string]any{"path": "notes.txt", "content": "gone"}},
		{Tool: "read_file", Args: map[string]any{"file": "notes.txt"}},
	} {
		obs, err := e.Execute(ctx, in) // err is non-nil only when ctx is cancelled
		if err != nil {
			panic(err)
		}
		fmt.Printf("%s %s read_only=%t healed=%v\n%s\n\n", obs.Status, obs.Reason, obs.ReadOnly, obs.Healed, strings.TrimSuffix(obs.Text(), "\n"))
	}
	// Output:
	// ok  read_only=true healed=[arguments.offset]
	// Tool "read_file" returned:
	// second line
	//
	// denied outside_root read_only=true healed=[]
	// Tool call "read_file" was denied (outside_root): "../etc/passwd" has a ".." component; paths may not leave the root folder, so ".." is never allowed
	//
	// denied not_allowed read_only=false healed=[]
	// Tool call "write_file" was denied (not_allowed): tool not allowed by policy: tool "write_file" is in category file_write, which has side effects and is not allowed in this run (allowed: file_read, search, semantic_search); an operator can allow it with --tools file_read,search,semantic_search,file_write (the category) or --tools file_read,search,semantic_search,write_file (this tool only)
	//
	// denied invalid_arguments read_only=true healed=[]
	// Tool call "read_file" was denied (invalid_arguments): invalid arguments for read_file (2 problems); nothing ran:
	// - arguments: missing property 'path'
	// - arguments: additional properties 'file' not allowed
	// read_file takes path (string, required), limit (integer), offset (integer); no other arguments.
}
