//go:build unix

package fstools

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mdap-go/mdap/categories"
	"github.com/mdap-go/mdap/executor"
	"github.com/mdap-go/mdap/intent"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// maxFuzzArgs bounds a fuzz input, so that every input runs in
// milliseconds and a short fuzz run never hits its deadline.
const maxFuzzArgs = 4 << 10

// FuzzToolArgs sends arbitrary JSON arguments to each built-in tool in a
// root with a sibling "outside" folder (and links out of the root). Execute
// never panics the process nor reports a tool panic, never returns content
// from outside, never writes outside, and keeps Content within the output
// cap; for read-only tools Execute(Normalize(x)) gives Execute(x).
func FuzzToolArgs(f *testing.F) {
	fx := newFixture(f)
	// Outside content is a token chosen here, which no input can guess.
	var raw [16]byte
	_, _ = rand.Read(raw[:])
	token := "OUTSIDE-" + hex.EncodeToString(raw[:])
	require.NoError(f, filepath.WalkDir(fx.outside, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			err = os.WriteFile(p, []byte(token+"\n"), 0o644)
		}
		return err
	}))
	outsideBefore := snapshot(f, fx.outside)
	const outputCap = 4 << 10
	e := newExec(f, fx.root, executor.WithPolicy(rwPolicy()), executor.WithTimeout(2*time.Second), executor.WithOutputCap(outputCap), WithReadCap(64<<10))
	tools := []string{"read_file", "list_dir", "glob", "grep", "write_file", categories.IndexTool}

	for _, s := range []struct {
		tool uint8
		args string
	}{
		{0, `{"path":"hello.txt","offset":2,"limit":1}`},
		{0, `{"path":"link_out.txt"}`},
		{0, `{"path":"a/inner/dir/deep.txt"}`},
		{0, `{"path":"up/outside/secret.txt"}`},
		{0, `{"path":"hello.txt","limit":9223372036854775807}`},
		{1, `{"path":"linkdir"}`},
		{1, `{}`},
		{2, `{"pattern":"**/*.txt"}`},
		{2, `{"pattern":"**/a/**/a/**/b","path":"sub"}`},
		{3, `{"pattern":"OUTSIDE|needle","paths":["sub","linkdir","chain"]}`},
		{3, `{"pattern":"x","paths":"[\"sub\"]","case_insensitive":"true","max_results":"3"}`},
		{3, `{"pattern":"(a+)+$","glob":"*.go"}`},
		{4, `{"path":"new.txt","content":"x"}`},
		{4, `{"path":"linkdir/evil.txt","content":"x"}`},
		{4, `{"path":"dangling_out","content":"x"}`},
		{4, `{"path":"sub/deeper/made/f.txt","content":"x","create_dirs":true}`},
		{5, `{"verbose":true}`},
	} {
		f.Add(s.tool, []byte(s.args))
	}

	f.Fuzz(func(t *testing.T, which uint8, raw []byte) {
		if len(raw) > maxFuzzArgs {
			return
		}
		var args map[string]any
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		if dec.Decode(&args) != nil {
			return
		}
		in := intent.ToolIntent{Tool: tools[int(which)%len(tools)], Args: args}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		obs, err := e.Execute(ctx, in)
		require.NoError(t, err)
		assert.NotEqual(t, intent.ReasonPanic, obs.Reason, obs.Content)
		assert.NotContains(t, obs.Content, token, "content from outside the root")
		assert.LessOrEqual(t, len(obs.Content), outputCap+noteSlack)
		assert.Equal(t, outsideBefore, snapshot(t, fx.outside), "nothing outside the root changes")
		entries, err := os.ReadDir(fx.base)
		require.NoError(t, err)
		assert.Len(t, entries, 2, "no file appears beside the root")

		if e.ReadOnly(in.Tool) {
			norm, nerr := e.Normalize(in)
			if nerr != nil {
				assert.Equal(t, obs.Content, nerr.Error())
				return
			}
			again, err := e.Execute(ctx, norm)
			require.NoError(t, err)
			sameObservation(t, obs, again, string(raw))
		}
	})
}
