package executor

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mdap-go/mdap/categories"
	"github.com/mdap-go/mdap/intent"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const objSchema = `{"type":"object","properties":{"text":{"type":"string"}},"additionalProperties":false}`

func echoTool(name string, c categories.Category) Tool {
	return NewTool(name, c, "echoes text", json.RawMessage(objSchema), func(_ context.Context, args map[string]any) (string, error) {
		s, _ := args["text"].(string)
		return s, nil
	})
}

func TestSideEffectToolRunsOnlyWhenAllowed(t *testing.T) {
	var runs atomic.Int32
	post := NewTool("post_message", categories.Web, "posts", json.RawMessage(objSchema), func(_ context.Context, args map[string]any) (string, error) {
		runs.Add(1)
		return "posted", nil
	})
	in := intent.ToolIntent{Tool: "post_message", Args: map[string]any{"text": "hi"}}

	e := newExec(t, WithTools(post))
	obs := run(t, e, in.Tool, in.Args)
	assert.Equal(t, intent.ReasonNotAllowed, obs.Reason)
	assert.Contains(t, obs.Content, "--tools file_read,search,semantic_search,web")
	assert.False(t, obs.ReadOnly)
	assert.Equal(t, categories.Web, obs.Category)
	assert.Zero(t, runs.Load(), "declared or not, a withheld tool never runs")

	byName := newExec(t, WithTools(post), WithPolicy(categories.Policy{Allow: []string{"post_message"}}))
	obs = run(t, byName, in.Tool, in.Args)
	assert.True(t, obs.OK(), obs.Content)
	assert.Equal(t, "posted", obs.Content)
	assert.Equal(t, int32(1), runs.Load())

	denied := newExec(t, WithTools(post), WithPolicy(categories.Policy{Categories: []categories.Category{categories.Web}, Deny: []string{"post_message"}}))
	obs = run(t, denied, in.Tool, in.Args)
	assert.Equal(t, intent.ReasonNotAllowed, obs.Reason, "deny beats the category")
}

func TestTimeout(t *testing.T) {
	polite := NewTool("polite", categories.Web, "", json.RawMessage(`{"type":"object"}`), func(ctx context.Context, _ map[string]any) (string, error) {
		<-ctx.Done()
		return "", ctx.Err()
	})
	release := make(chan struct{})
	var finished sync.WaitGroup
	finished.Add(1)
	rude := NewTool("rude", categories.Web, "", json.RawMessage(`{"type":"object"}`), func(context.Context, map[string]any) (string, error) {
		defer finished.Done()
		<-release // ignores its context
		return "late", nil
	})
	e := newExec(t, WithTools(polite, rude), WithTimeout(50*time.Millisecond),
		WithPolicy(categories.Policy{Categories: []categories.Category{categories.Web}}))

	start := time.Now()
	obs := run(t, e, "polite", nil)
	assert.Equal(t, intent.StatusError, obs.Status)
	assert.Equal(t, intent.ReasonTimeout, obs.Reason)
	assert.Contains(t, obs.Content, "did not finish within 50ms")
	assert.Contains(t, obs.Content, "side effects")

	obs = run(t, e, "rude", nil)
	assert.Equal(t, intent.ReasonTimeout, obs.Reason, "a tool that ignores its context is abandoned")
	assert.Less(t, time.Since(start), 2*time.Second)
	close(release)
	finished.Wait()
}

func TestPanicIsAnObservation(t *testing.T) {
	boom := NewTool("boom", categories.FileRead, "", json.RawMessage(`{"type":"object"}`), func(context.Context, map[string]any) (string, error) {
		var m map[string]int
		//lint:ignore SA5000 the tool must panic: that is what this test is about
		m["x"] = 1
		return "", nil
	})
	e := newExec(t, WithTools(boom))
	obs, err := e.Execute(context.Background(), intent.ToolIntent{Tool: "boom"})
	require.NoError(t, err)
	assert.Equal(t, intent.StatusError, obs.Status)
	assert.Equal(t, intent.ReasonPanic, obs.Reason)
	assert.Contains(t, obs.Content, "assignment to entry in nil map")
}

func TestToolErrorsAndSentinels(t *testing.T) {
	mk := func(name string, err error) Tool {
		return NewTool(name, categories.FileRead, "", json.RawMessage(`{"type":"object"}`), func(context.Context, map[string]any) (string, error) {
			return "ignored", err
		})
	}
	e := newExec(t, WithTools(
		mk("plain", errors.New("the service said no")),
		mk("outside", refusef(ErrOutsideRoot, "custom outside")),
		mk("missing", fmt.Errorf("wrapped: %w", fs.ErrNotExist)),
	))
	obs := run(t, e, "plain", nil)
	assert.Equal(t, intent.StatusError, obs.Status)
	assert.Equal(t, intent.ReasonToolError, obs.Reason)
	assert.Equal(t, "the service said no", obs.Content)

	obs = run(t, e, "outside", nil)
	assert.Equal(t, intent.StatusDenied, obs.Status)
	assert.Equal(t, intent.ReasonOutsideRoot, obs.Reason)
	assert.Equal(t, "custom outside", obs.Content)

	obs = run(t, e, "missing", nil)
	assert.Equal(t, intent.ReasonNotFound, obs.Reason)
}

func TestOutputCap(t *testing.T) {
	long := NewTool("long", categories.FileRead, "", json.RawMessage(objSchema), func(_ context.Context, args map[string]any) (string, error) {
		return args["text"].(string), nil
	})
	e := newExec(t, WithTools(long), WithOutputCap(5))
	obs := run(t, e, "long", map[string]any{"text": "0123456789"})
	assert.True(t, obs.Truncated)
	assert.Equal(t, "01234\n[output truncated: showing the first 5 of 10 bytes]", obs.Content)

	obs = run(t, e, "long", map[string]any{"text": "ééé"}) // 6 bytes
	assert.True(t, obs.Truncated)
	assert.True(t, strings.HasPrefix(obs.Content, "éé\n"), "cut on a rune boundary: %q", obs.Content)

	obs = run(t, e, "long", map[string]any{"text": "12345"})
	assert.False(t, obs.Truncated)
	assert.Equal(t, "12345", obs.Content)

	self := NewTool("self", categories.FileRead, "", json.RawMessage(`{"type":"object"}`), func(ctx context.Context, _ map[string]any) (string, error) {
		MarkTruncated(ctx)
		return "cut by me", nil
	})
	MarkTruncated(context.Background()) // outside a call: no effect, no panic
	e = newExec(t, WithTools(self))
	obs = run(t, e, "self", nil)
	assert.True(t, obs.Truncated, "a tool reports its own truncation")
}

func TestCancellationIsTheOnlyError(t *testing.T) {
	started := make(chan struct{})
	wait := NewTool("wait", categories.Web, "", json.RawMessage(`{"type":"object"}`), func(ctx context.Context, _ map[string]any) (string, error) {
		close(started)
		<-ctx.Done()
		return "", ctx.Err()
	})
	e := newExec(t, WithTools(wait), WithPolicy(categories.Policy{Allow: []string{"wait"}}))

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	obs, err := e.Execute(ctx, intent.ToolIntent{Tool: "wait"})
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, intent.ReasonCancelled, obs.Reason)

	ctx, cancel = context.WithCancel(context.Background())
	go func() { <-started; cancel() }()
	obs, err = e.Execute(ctx, intent.ToolIntent{Tool: "wait"})
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, intent.ReasonCancelled, obs.Reason)
	assert.Contains(t, obs.Content, "may have acted")
}

func TestLogs(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	e := newExec(t, WithLogger(log), WithTools(echoTool("echo", categories.FileRead)))
	run(t, e, "nope", nil)
	run(t, e, "echo", map[string]any{"text": "x"})
	out := buf.String()
	assert.Contains(t, out, `"msg":"executor: call denied","tool":"nope","reason":"unknown_tool"`)
	assert.Contains(t, out, `"msg":"executor: call ran","tool":"echo"`)
	assert.Contains(t, out, `"msg":"executor: tool registered","tool":"echo"`)
}
