package benchmarks

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// needPython skips a test that runs paperloop.py when there is no python3.
func needPython(t *testing.T) *pythonLoop {
	t.Helper()
	p, err := newPythonLoop(context.Background(), t.TempDir())
	if err != nil {
		require.ErrorIs(t, err, errNoPython)
		t.Skip("python3 is not on PATH: the paper's loop in Python cannot run (the overhead suite then leaves its rows out)")
	}
	return p
}

// sentRequest is what a loop's request asks of the server, decoded: the
// two loops encode JSON differently (Go escapes '>' as \u003e, Python
// does not), so their bytes are compared as values, the prompts as
// strings.
type sentRequest struct {
	Model    string `json:"model"`
	Messages []struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	} `json:"messages"`
	Temperature float64 `json:"temperature"`
	MaxTokens   int     `json:"max_tokens"`
	Seed        int     `json:"seed"`
	N           *int    `json:"n"`
	Extra       map[string]json.RawMessage
}

func decodeRequests(t *testing.T, bodies [][]byte) []sentRequest {
	t.Helper()
	out := make([]sentRequest, len(bodies))
	for i, b := range bodies {
		require.NoError(t, json.Unmarshal(b, &out[i]), "request %d", i)
		var all map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(b, &all))
		for _, k := range []string{"model", "messages", "temperature", "max_tokens", "seed", "n"} {
			delete(all, k)
		}
		if len(all) > 0 {
			out[i].Extra = all // a field one loop sends and the other may not
		}
	}
	return out
}

// recordingProxy serves on loopback, keeps the body of every request and
// passes it on to target, answering what target answers.
func recordingProxy(t *testing.T, target string) (url string, bodies func() [][]byte) {
	t.Helper()
	var (
		mu   sync.Mutex
		kept [][]byte
	)
	client := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	t.Cleanup(client.CloseIdleConnections)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		mu.Lock()
		kept = append(kept, b)
		mu.Unlock()
		req, err := http.NewRequestWithContext(r.Context(), r.Method, target+r.URL.Path, bytes.NewReader(b))
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		req.Header = r.Header.Clone()
		resp, err := client.Do(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		w.Header().Set("Content-Type", resp.Header.Get("Content-Type"))
		w.WriteHeader(resp.StatusCode)
		_, _ = io.Copy(w, resp.Body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, func() [][]byte {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(kept)
	}
}

// bothLoops runs the Go reference and the Python loop (script, when not
// empty, replaces paperloop.py) over the serve-sim at simURL, each through
// a recording proxy, and returns their runs and requests.
func bothLoops(t *testing.T, p *pythonLoop, simURL, model string, disks, k int) (ReferenceRun, []sentRequest, pythonRun, []sentRequest, error) {
	t.Helper()
	goURL, goBodies := recordingProxy(t, simURL)
	ref, err := ReferenceLoop(context.Background(), http.DefaultTransport.(*http.Transport).Clone(), goURL+"/v1", model, disks, k)
	require.NoError(t, err)
	pyURL, pyBodies := recordingProxy(t, simURL)
	run, pyErr := p.run(context.Background(), pyURL+"/v1", model, disks, k)
	return ref, decodeRequests(t, goBodies()), run, decodeRequests(t, pyBodies()), pyErr
}

// TestPaperLoopInPythonSendsTheGoLoopsRequests: over a real serve-sim on
// loopback, the paper's loop in Python sends exactly the Go reference
// loop's requests, in order (the same prompts byte for byte, temperature,
// cap, seed and nothing else), so it draws the same samples, takes the
// same steps and solves, for several disk counts and margins.
func TestPaperLoopInPythonSendsTheGoLoopsRequests(t *testing.T) {
	p := needPython(t)
	srv, err := startSimServer(context.Background(), sim.DefaultConfig())
	require.NoError(t, err)
	defer func() { require.NoError(t, srv.stop()) }()
	for _, c := range []struct{ disks, k int }{{1, 1}, {3, 1}, {4, 3}, {5, 2}, {6, 4}} {
		ref, goReqs, run, pyReqs, err := bothLoops(t, p, srv.url, srv.model, c.disks, c.k)
		require.NoError(t, err, "%+v", c)
		assert.True(t, ref.Solved, "%+v", c)
		assert.True(t, run.Solved, "%+v", c)
		assert.Equal(t, 1<<c.disks-1, run.Steps, "%+v", c)
		assert.Equal(t, ref.Steps, run.Steps, "%+v", c)
		assert.Equal(t, ref.Samples, run.Samples, "%+v", c)
		require.Len(t, pyReqs, len(goReqs), "%+v", c)
		for i := range goReqs {
			require.Equal(t, goReqs[i], pyReqs[i], "%+v: request %d", c, i)
		}
		assert.Greater(t, run.Samples, c.k*run.Steps-1, "%+v: k samples a step at least", c)
		assert.Positive(t, run.CPUSeconds, "%+v", c)
		assert.Positive(t, run.WallSeconds, "%+v", c)
	}
}

// TestPaperLoopInPythonTimesItsLoopAlone: the CPU time the script reports
// is its loop's, not its process's: on a one-sample run (1 disk, k = 1)
// the interpreter's start-up and imports are most of the process's CPU,
// and they are not in the figure.
func TestPaperLoopInPythonTimesItsLoopAlone(t *testing.T) {
	p := needPython(t)
	srv, err := startSimServer(context.Background(), sim.DefaultConfig())
	require.NoError(t, err)
	defer func() { require.NoError(t, srv.stop()) }()
	run, err := p.run(context.Background(), srv.url+"/v1", srv.model, 1, 1)
	require.NoError(t, err)
	require.Equal(t, 1, run.Samples)
	assert.Positive(t, run.cpu())
	assert.Less(t, run.cpu(), run.process/2, "the loop %s, the process %s", run.cpu(), run.process)
	t.Logf("the loop %s, the process %s", run.cpu(), run.process)
}

// TestPaperLoopInPythonBrokenDiffers: the comparison above catches a
// Python loop that is wrong in what it sends: each mutant of paperloop.py
// sends other requests than the Go loop's, or fails.
func TestPaperLoopInPythonBrokenDiffers(t *testing.T) {
	p := needPython(t)
	srv, err := startSimServer(context.Background(), sim.DefaultConfig())
	require.NoError(t, err)
	defer func() { require.NoError(t, srv.stop()) }()
	for name, m := range map[string][2]string{
		"temperature 0.1 from the first sample": {`temperature = 0 if i == 0 else 0.1`, `temperature = 0.1`},
		"seed the sample index":                 {`temperature, i + 1, max_tokens)`, `temperature, i, max_tokens)`},
		"one token more allowed":                {`"max_tokens": max_tokens,`, `"max_tokens": max_tokens + 1,`},
		"the prompt without its blank line":     {`+ "\n\n"`, `+ "\n"`},
		"the state's pegs unspaced":             {`", ".join("[" +`, `",".join("[" +`},
		"k - 1 ahead wins":                      {`>= k + best_other`, `>= k - 1 + best_other`},
	} {
		require.Contains(t, string(paperLoopPy), m[0], name)
		mutant := *p
		mutant.script = filepath.Join(t.TempDir(), "paperloop.py")
		require.NoError(t, os.WriteFile(mutant.script, []byte(strings.Replace(string(paperLoopPy), m[0], m[1], 1)), 0o644))
		_, goReqs, _, pyReqs, err := bothLoops(t, &mutant, srv.url, srv.model, 4, 3)
		t.Logf("%s: error %v, %d requests against %d", name, err, len(pyReqs), len(goReqs))
		require.NotEmpty(t, pyReqs, "%s: the mutant ran", name)
		if err == nil {
			assert.NotEqual(t, goReqs, pyReqs, name)
		}
	}
}

// TestPaperLoopInPythonIsSelfContained: paperloop.py compiles, imports
// only the standard library modules its doc names, and reads nothing but
// its stdin (no file, no environment variable).
func TestPaperLoopInPythonIsSelfContained(t *testing.T) {
	p := needPython(t)
	cmd := exec.Command(p.python, "-I", "-c", "import ast, sys; ast.parse(sys.stdin.read())")
	cmd.Stdin = bytes.NewReader(paperLoopPy)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	imports := regexp.MustCompile(`(?m)^\s*(?:import|from)\s+([\w.]+)`).FindAllStringSubmatch(string(paperLoopPy), -1)
	var mods []string
	for _, m := range imports {
		mods = append(mods, m[1])
	}
	assert.ElementsMatch(t, []string{"http.client", "json", "re", "sys", "time", "urllib.parse"}, mods)
	for _, banned := range []string{"open(", "os.environ", "getenv", "subprocess", "__import__", "importlib"} {
		assert.NotContains(t, string(paperLoopPy), banned)
	}
}

// TestPythonAbsent: with no python3 on PATH, the paper's loop in Python
// says so as errNoPython, not another error.
func TestPythonAbsent(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := newPythonLoop(context.Background(), t.TempDir())
	require.ErrorIs(t, err, errNoPython)
}

// TestHanoiTemplate: the fixed text handed to the Python loop rebuilds
// the Go prompt of any step from that step's data, for several disk
// counts (the prompt's head depends on their parity).
func TestHanoiTemplate(t *testing.T) {
	for _, n := range []int{1, 2, 3, 10} {
		head, tail, err := hanoiTemplate(n)
		require.NoError(t, err)
		task, _ := hanoi.New(n)
		for !task.Done() {
			prev := hanoi.NoPreviousMove
			if m := task.Previous(); m != nil {
				prev = m.String()
			}
			want := hanoi.UserPrompt(n, task.State(), task.Previous())
			require.Equal(t, want, head+hanoi.PreviousMovePrefix+prev+"\n"+hanoi.CurrentStatePrefix+task.State().String()+"\n\n"+tail, "%d disks, step %d", n, task.Steps())
			a, err := hanoi.CorrectAnswer(task.State(), task.Previous())
			require.NoError(t, err)
			_, err = task.Advance(a)
			require.NoError(t, err)
		}
	}
}
