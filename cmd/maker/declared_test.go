package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/models"
	"github.com/mdap-go/mdap/maker/spec"
	"github.com/mdap-go/mdap/vote"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// declServer is a loopback OpenAI-compatible server playing a capable
// model that knows nothing of mdap's tools: it proposes the right call
// only when the request declares the tool and its argument names, in
// "tools" (then it calls natively) or in the prompt (then it writes the
// call as text). Otherwise it guesses argument names, as a real model
// does, and every reply is refused. It answers the find-version task.
type declServer struct {
	*httptest.Server
	mu                   sync.Mutex
	requests             int
	nativeDecl, textDecl int // requests that declared the step's tool natively, in the prompt
}

type chatRequest struct {
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Function struct {
			Name       string         `json:"name"`
			Parameters map[string]any `json:"parameters"`
		} `json:"function"`
	} `json:"tools"`
}

// text returns a message content's text: a string, or the text parts.
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &parts)
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

var declStepRE = regexp.MustCompile(`(?m)^Step: (\d+)$`)

func newDeclServer(t *testing.T) *declServer {
	d := &declServer{}
	d.Server = httptest.NewServer(http.HandlerFunc(d.serve))
	t.Cleanup(d.Close)
	return d
}

func (d *declServer) counts() (requests, native, text int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.requests, d.nativeDecl, d.textDecl
}

func (d *declServer) serve(w http.ResponseWriter, r *http.Request) {
	if !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		http.NotFound(w, r)
		return
	}
	var req chatRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var system, user string
	for _, m := range req.Messages {
		if m.Role == "system" {
			system += contentText(m.Content)
		} else {
			user += contentText(m.Content)
		}
	}
	native := func(tool string, args ...string) bool {
		for _, t := range req.Tools {
			props, _ := t.Function.Parameters["properties"].(map[string]any)
			if t.Function.Name != tool {
				continue
			}
			for _, a := range args {
				if _, ok := props[a]; !ok {
					return false
				}
			}
			return true
		}
		return false
	}
	inPrompt := func(tool string, args ...string) bool {
		i := strings.Index(system, "\n- "+tool+":")
		if i < 0 {
			return false
		}
		section := system[i+1:]
		if j := strings.Index(section[2:], "\n- "); j >= 0 {
			section = section[:j+2]
		}
		for _, a := range args {
			if !strings.Contains(section, "\n  "+a+" (") {
				return false
			}
		}
		return true
	}
	step := -1
	if m := declStepRE.FindStringSubmatch(user); m != nil {
		fmt.Sscan(m[1], &step)
	}
	var tool, args, guess string
	switch {
	case step == 0:
		tool, args, guess = "grep", `{"pattern":"Version = ","paths":["src"]}`, `{"regex":"Version","dir":"src"}`
	case step == 1 && strings.Contains(user, `src/version.go:4: const Version = "1.4.2"`):
		tool, args, guess = "read_file", `{"path":"src/version.go"}`, `{"file":"src/version.go"}`
	case step == 2 && strings.Contains(user, "// Version is the release this tree builds."):
		d.reply(w, `{"state":{"version":"1.4.2","file":"src/version.go"},"done":true}`, nil)
		return
	default:
		d.reply(w, `{"state":{"version":null,"file":null},"done":false}`, nil)
		return
	}
	var argNames []string
	var m map[string]any
	_ = json.Unmarshal([]byte(args), &m)
	for k := range m {
		argNames = append(argNames, k)
	}
	n, p := native(tool, argNames...), inPrompt(tool, argNames...)
	d.mu.Lock()
	d.requests++
	if n {
		d.nativeDecl++
	}
	if p {
		d.textDecl++
	}
	d.mu.Unlock()
	switch {
	case n:
		d.reply(w, "", map[string]any{"id": "call_1", "type": "function", "function": map[string]any{"name": tool, "arguments": args}})
	case p:
		d.reply(w, fmt.Sprintf(`{"tool_intent": {"tool": %q, "args": %s}}`, tool, args), nil)
	default:
		d.reply(w, fmt.Sprintf(`{"tool_intent": {"tool": %q, "args": %s}}`, tool, guess), nil)
	}
}

func (d *declServer) reply(w http.ResponseWriter, content string, call map[string]any) {
	msg := map[string]any{"role": "assistant", "content": content}
	finish := "stop"
	if call != nil {
		msg["tool_calls"] = []any{call}
		finish = "tool_calls"
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "toy",
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
		"usage":   map[string]any{"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
	})
}

// outcome is what the three faces report of one run.
type outcome struct {
	Done                     bool
	State                    string
	Steps, ToolCalls, Denied int
	Samples                  int
}

func canonJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	var x any
	require.NoError(t, json.Unmarshal(b, &x))
	b, err = json.Marshal(x)
	require.NoError(t, err)
	return string(b)
}

// TestDeclaredToolsSolveThroughARealClient: the find-version task (two
// tools, grep and read_file) through an OpenAI-compatible server that
// answers right only when told the tools' argument names. maker run
// (native and prompt declarations), maker solve and MCP run_task all
// solve it, with equal results.
func TestDeclaredToolsSolveThroughARealClient(t *testing.T) {
	t.Parallel()
	srv := newDeclServer(t)
	base := srv.URL + "/v1"
	specPath := specFile(t, "find-version.json")
	want := `{"file":"src/version.go","version":"1.4.2"}`

	got := map[string]outcome{}
	for _, mode := range []string{"auto", "prompt", "both"} {
		r0, n0, p0 := srv.counts()
		c := start(t, nil, "run", specPath, "--model", "openai:toy", "--base-url", base, "--tool-declaration", mode, "--json", "--progress", "off")
		require.Equal(t, 0, c.wait(t, time.Minute), "mode %s: %s", mode, &c.stderr)
		var s specSummary
		require.NoError(t, json.Unmarshal(c.stdout.Bytes(), &s))
		got["run "+mode] = outcome{s.Solved, canonJSON(t, s.State), s.Steps, s.ToolCalls, s.Denied, s.Samples}
		r1, n1, p1 := srv.counts()
		calls := r1 - r0
		require.Positive(t, calls)
		switch mode {
		case "auto": // openai: takes native tools
			assert.Equal(t, calls, n1-n0, "auto: every tool step's request declared natively")
			assert.Zero(t, p1-p0, "auto: not in the prompt")
		case "prompt":
			assert.Zero(t, n1-n0)
			assert.Equal(t, calls, p1-p0, "prompt: every tool step's request declared in the prompt")
		case "both":
			assert.Equal(t, calls, n1-n0)
			assert.Equal(t, calls, p1-p0)
		}
	}

	// maker solve, on a tasks file naming the same spec.
	dir := t.TempDir()
	tasks := filepath.Join(dir, "tasks.jsonl")
	require.NoError(t, os.WriteFile(tasks, []byte(fmt.Sprintf(`{"id": "fv", "spec": %q}`+"\n", specPath)), 0o644))
	out := filepath.Join(dir, "results.jsonl")
	c := start(t, nil, "solve", tasks, "--out", out, "--model", "openai:toy", "--base-url", base, "--progress", "off")
	require.Equal(t, 0, c.wait(t, time.Minute), "solve: %s", &c.stderr)
	rs := results(t, out)
	fv := rs["fv"]
	num := func(m map[string]any, k string) int { f, _ := m[k].(float64); return int(f) } // omitempty: absent is 0
	got["solve"] = outcome{fv["status"] == "solved", canonJSON(t, fv["state"]), num(fv, "steps"), num(fv, "tool_calls"), num(fv, "denied"), num(fv, "samples")}

	// MCP run_task, over stdio of `maker mcp`, with the spec folder as
	// the server's root.
	cmd := exec.Command(binary, "mcp", "--root", filepath.Dir(specPath), "--state", t.TempDir(), "--model", "openai:toy", "--base-url", base, "--log-level", "warn")
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "declared-test"}, nil).Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	require.NoError(t, err)
	defer cs.Close()
	m := ok(t, callTool(t, context.Background(), cs, "run_task", map[string]any{"spec_path": "find-version.json"}, ""))
	got["mcp"] = outcome{m["done"] == true, canonJSON(t, m["final_state"]), num(m, "steps"), num(m, "tool_calls"), num(m, "denied"), num(m, "samples")}

	// MCP run_task with the declaration forced into the prompt.
	_, n0, p0 := srv.counts()
	cmd = exec.Command(binary, "mcp", "--root", filepath.Dir(specPath), "--state", t.TempDir(), "--model", "openai:toy", "--base-url", base, "--log-level", "warn", "--tool-declaration", "prompt")
	cs2, err := mcp.NewClient(&mcp.Implementation{Name: "declared-test"}, nil).Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	require.NoError(t, err)
	defer cs2.Close()
	m = ok(t, callTool(t, context.Background(), cs2, "run_task", map[string]any{"spec_path": "find-version.json"}, ""))
	got["mcp prompt"] = outcome{m["done"] == true, canonJSON(t, m["final_state"]), num(m, "steps"), num(m, "tool_calls"), num(m, "denied"), num(m, "samples")}
	_, n1, p1 := srv.counts()
	assert.Zero(t, n1-n0, "mcp --tool-declaration prompt: nothing native")
	assert.Positive(t, p1-p0, "mcp --tool-declaration prompt: in the prompt")

	first := got["run auto"]
	assert.True(t, first.Done)
	assert.Equal(t, want, first.State)
	assert.Equal(t, outcome{true, want, 3, 2, 0, 9}, first, "3 steps of k=3 unanimous samples, 2 tool calls")
	for name, r := range got {
		assert.Equal(t, first, r, name)
	}
}

// TestDeclServerRefusesUndeclaredTools: the test server is a real
// discriminator: a run that declares no tools (its model sees only the
// spec's generic tool_intent line) guesses argument names, every reply is
// red-flagged, and the run fails.
func TestDeclServerRefusesUndeclaredTools(t *testing.T) {
	t.Parallel()
	srv := newDeclServer(t)
	st, err := spec.OpenFile(specFile(t, "find-version.json"), "", "")
	require.NoError(t, err)
	defer st.Close()
	m, err := models.Open("openai:toy", models.Options{BaseURL: srv.URL + "/v1"})
	require.NoError(t, err)
	s := &maker.Solver{Config: maker.Config{Vote: vote.Config{K: 3, MaxSamples: 12}}, Model: m, Executor: st.Executor}
	rep, err := s.Solve(context.Background(), st.Task)
	require.Error(t, err)
	assert.Zero(t, rep.Steps)
	assert.Equal(t, 12, rep.Flagged, "every guess is refused: invalid arguments")
	_, native, text := srv.counts()
	assert.Zero(t, native+text)
}

// TestCalibrateDeclaresTheSpecsTools: maker calibrate --spec draws its
// samples as maker run would, with the spec's tools declared (natively
// for an openai: model, in the prompt with --tool-declaration prompt), so
// the p it measures is the run's. The server answers right only when the
// tools are declared: without them p would be 0.
func TestCalibrateDeclaresTheSpecsTools(t *testing.T) {
	t.Parallel()
	srv := newDeclServer(t)
	base := srv.URL + "/v1"
	specPath := specFile(t, "find-version.json")
	for _, mode := range []string{"auto", "prompt"} {
		r0, n0, p0 := srv.counts()
		c := start(t, nil, "calibrate", "--spec", specPath, "--model", "openai:toy", "--base-url", base,
			"--samples", "3", "--tool-declaration", mode, "--json", "--progress", "off")
		code := c.wait(t, time.Minute)
		require.Contains(t, []int{0, 1}, code, "mode %s: %s", mode, &c.stderr)
		var rep struct {
			All struct {
				Samples int     `json:"samples"`
				Correct int     `json:"correct"`
				P       float64 `json:"p"`
			} `json:"all"`
		}
		require.NoError(t, json.Unmarshal(c.stdout.Bytes(), &rep), c.stdout.String())
		require.Positive(t, rep.All.Samples)
		assert.Equal(t, rep.All.Samples, rep.All.Correct, "mode %s: every sample right once the tools are declared", mode)
		r1, n1, p1 := srv.counts()
		require.Positive(t, r1-r0)
		if mode == "auto" {
			assert.Positive(t, n1-n0, "auto: declared natively")
			assert.Zero(t, p1-p0)
		} else {
			assert.Zero(t, n1-n0)
			assert.Positive(t, p1-p0, "prompt: declared in the prompt")
		}
	}
	code, _, errOut := cli(t, "calibrate", "--disks", "3", "--tool-declaration", "native")
	assert.Equal(t, 2, code, "--tool-declaration applies to --spec only: %s", errOut)
}

// TestDeclaredToolsOverNATS: over the engine, --tool-declaration auto
// declares the spec's tools natively to an openai: model, as in process
// (the coordinator's model is the workers'), and the run solves.
func TestDeclaredToolsOverNATS(t *testing.T) {
	t.Parallel()
	srv := newDeclServer(t)
	base := srv.URL + "/v1"
	url := startNATS(t)
	w := start(t, nil, append([]string{"worker", "--nats", url, "--model", "openai:toy", "--base-url", base}, nextIdentity(t)...)...)
	c := start(t, nil, "run", specFile(t, "find-version.json"), "--nats", url, "--model", "openai:toy", "--json", "--progress", "off")
	require.Equal(t, 0, c.wait(t, 2*time.Minute), "%s", &c.stderr)
	var s specSummary
	require.NoError(t, json.Unmarshal(c.stdout.Bytes(), &s))
	assert.True(t, s.Solved)
	requests, native, text := srv.counts()
	require.Positive(t, requests)
	assert.Positive(t, native, "declared natively through the workers")
	assert.Zero(t, text, "not in the prompt")
	stopWorkers(t, w)
}
