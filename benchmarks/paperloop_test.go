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
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/mdap-go/mdap/maker/simserver"
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

// firstDifference is the index of the first request in which a and b
// differ (len(a) or len(b) when one is the other's prefix), or -1 when
// they are equal.
func firstDifference(a, b []sentRequest) int {
	for i := range min(len(a), len(b)) {
		if !reflect.DeepEqual(a[i], b[i]) {
			return i
		}
	}
	if len(a) != len(b) {
		return min(len(a), len(b))
	}
	return -1
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
// a recording proxy, and returns their runs, requests and errors.
func bothLoops(t *testing.T, p *pythonLoop, simURL, model string, disks, k int) (ref ReferenceRun, goReqs []sentRequest, run pythonRun, pyReqs []sentRequest, goErr, pyErr error) {
	t.Helper()
	goURL, goBodies := recordingProxy(t, simURL)
	ref, goErr = ReferenceLoop(context.Background(), http.DefaultTransport.(*http.Transport).Clone(), goURL+"/v1", model, disks, k)
	pyURL, pyBodies := recordingProxy(t, simURL)
	run, pyErr = p.run(context.Background(), pyURL+"/v1", model, disks, k)
	return ref, decodeRequests(t, goBodies()), run, decodeRequests(t, pyBodies()), goErr, pyErr
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
		ref, goReqs, run, pyReqs, goErr, err := bothLoops(t, p, srv.url, srv.model, c.disks, c.k)
		require.NoError(t, goErr, "%+v", c)
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

// poorModel serves, on loopback in this process (the serve-sim child takes
// only a seed), a simulated model right three times in four, with a
// red-flagged reply one time in six and its errors on two rival answers.
func poorModel(t *testing.T) (url, model string) {
	t.Helper()
	cfg := sim.DefaultConfig()
	cfg.P, cfg.FlagRate, cfg.WrongAnswers, cfg.Seed = 0.75, 1.0/6, 2, 11
	srv, err := simserver.New(simserver.Config{Oracle: hanoi.Oracle{}, Sim: cfg})
	require.NoError(t, err)
	h := httptest.NewServer(srv)
	t.Cleanup(h.Close)
	return h.URL, srv.ModelName()
}

// TestPaperLoopInPythonVotesAsTheGoLoop: on a poor model (p = 0.75, a
// red-flagged reply one time in six, errors on two rival answers) the two
// loops still send the same requests: they red-flag the same replies, count
// the same rival votes, call the same winners, wrong ones included, agree
// on whether the run is solved, and stop alike at a winner that is not a
// state.
func TestPaperLoopInPythonVotesAsTheGoLoop(t *testing.T) {
	p := needPython(t)
	url, model := poorModel(t)
	solved := map[bool]int{}
	flagged, stopped := 0, 0
	for _, c := range []struct{ disks, k int }{{4, 1}, {4, 2}, {5, 2}, {5, 3}, {6, 1}} {
		ref, goReqs, run, pyReqs, goErr, err := bothLoops(t, p, url, model, c.disks, c.k)
		switch {
		case goErr != nil: // a winner that is not a state: both stop there
			require.ErrorIs(t, goErr, ErrFloor, "%+v", c)
			step := regexp.MustCompile(`reference loop: (step \d+): `).FindStringSubmatch(goErr.Error())
			require.NotNil(t, step, "%+v: %v", c, goErr)
			require.ErrorContains(t, err, "Floor: "+step[1]+": winner", "%+v: at the same step", c)
			stopped++
		case !ref.Solved:
			require.ErrorContains(t, err, "not solved", "%+v", c)
		default:
			require.NoError(t, err, "%+v", c)
		}
		if goErr == nil {
			solved[ref.Solved]++
			assert.Equal(t, ref.Solved, run.Solved, "%+v", c)
			assert.Equal(t, ref.Samples, run.Samples, "%+v", c)
		}
		require.Len(t, pyReqs, len(goReqs), "%+v", c)
		for i := range goReqs {
			require.Equal(t, goReqs[i], pyReqs[i], "%+v: request %d", c, i)
		}
		t.Logf("%+v: %d samples for %d steps, solved %v; %v", c, run.Samples, run.Steps, run.Solved, err)
		if goErr == nil {
			flagged += run.Samples - c.k*run.Steps
		}
	}
	// Seed 11's draws take every path: a run that stops, one that ends
	// unsolved, one solved.
	assert.Positive(t, stopped, "a winner that is not a state: both stop")
	assert.Positive(t, solved[false], "a wrong winner in some run: the loops apply it alike")
	assert.Positive(t, solved[true], "some run solved")
	assert.Greater(t, flagged, 50, "red flags and rival votes: samples beyond k a step")
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

// TestPaperLoopInPythonBrokenDiffers: the comparisons above catch a
// Python loop that is wrong in what it sends, flags, parses or counts:
// each mutant of paperloop.py, on the poor model, sends other requests
// than the Go loop's or fails where the Go loop does not. (Two mutants
// this sim cannot tell apart are left out: a cut-off reply that votes
// (its answer is cut in half, so it never parses) and the first answer of
// a reply instead of the last (the sim writes one).)
func TestPaperLoopInPythonBrokenDiffers(t *testing.T) {
	p := needPython(t)
	url, model := poorModel(t)
	// The script itself passes where its mutants must fail: else any
	// error would count as a kill.
	_, goReqs, _, pyReqs, goErr, err := bothLoops(t, p, url, model, 5, 2)
	require.NoError(t, goErr)
	require.NoError(t, err, "the script itself")
	require.Equal(t, -1, firstDifference(goReqs, pyReqs), "the script itself sends the Go loop's requests")
	for name, m := range map[string][2]string{
		"temperature 0.1 from the first sample": {`temperature = 0 if i == 0 else 0.1`, `temperature = 0.1`},
		"seed the sample index":                 {`temperature, i + 1, max_tokens)`, `temperature, i, max_tokens)`},
		"one token more allowed":                {`"max_tokens": max_tokens,`, `"max_tokens": max_tokens + 1,`},
		"the prompt without its blank line":     {`+ "\n\n"`, `+ "\n"`},
		"the state's pegs unspaced":             {`", ".join("[" +`, `",".join("[" +`},
		"k - 1 ahead wins":                      {`>= k + best_other`, `>= k - 1 + best_other`},
		"an overlong reply votes":               {`or tokens > max_tokens:`, `:`},
		"votes keyed by the move alone":         {`vote = (tuple(move), tuple(tuple(peg) for peg in state))`, `vote = (tuple(move), ())`},
		"ahead of itself too":                   {`if v != vote]`, `]`},
	} {
		require.Contains(t, string(paperLoopPy), m[0], name)
		mutant := *p
		mutant.script = filepath.Join(t.TempDir(), "paperloop.py")
		require.NoError(t, os.WriteFile(mutant.script, []byte(strings.Replace(string(paperLoopPy), m[0], m[1], 1)), 0o644))
		_, goReqs, _, pyReqs, goErr, err := bothLoops(t, &mutant, url, model, 5, 2)
		require.NoError(t, goErr)
		t.Logf("%s: error %v, %d requests against %d", name, err, len(pyReqs), len(goReqs))
		require.NotEmpty(t, pyReqs, "%s: the mutant ran", name)
		if err == nil {
			assert.NotEqual(t, -1, firstDifference(goReqs, pyReqs), "%s: the same requests", name)
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
