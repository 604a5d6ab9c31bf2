package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"image/png"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// viewURL waits for the address a maker process prints for its view.
func viewURL(t *testing.T, c *child) string {
	t.Helper()
	re := regexp.MustCompile(`http://[0-9.:\[\]]+/`)
	var url string
	require.Eventually(t, func() bool {
		url = re.FindString(c.stderr.String())
		return url != ""
	}, 30*time.Second, 10*time.Millisecond, "no address on stderr")
	return url
}

// viewToken is the token a view printed on stderr when it made one.
func viewToken(t *testing.T, c *child) string {
	t.Helper()
	m := regexp.MustCompile(`Bearer ([0-9a-f]{64})`).FindStringSubmatch(c.stderr.String())
	require.Len(t, m, 2, "no token on stderr: %s", c.stderr.String())
	return m[1]
}

// viewState is the part of /state the tests read.
type viewState struct {
	Stats struct {
		Steps int    `json:"steps"`
		Total int    `json:"total"`
		Task  string `json:"task"`
	} `json:"stats"`
}

func getState(t *testing.T, url, token string) (int, viewState) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url+"state", nil)
	require.NoError(t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var st viewState
	if resp.StatusCode == http.StatusOK {
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&st))
	}
	return resp.StatusCode, st
}

// viewStep is the part of /step/N the tests read.
type viewStep struct {
	Key     string         `json:"key"`
	Votes   map[string]int `json:"votes"`
	Samples []struct {
		Class       string `json:"class"`
		Model       string `json:"model"`
		Winner      bool   `json:"winner"`
		InputTokens int    `json:"input_tokens"`
	} `json:"samples"`
}

func getStep(t *testing.T, url, token string, step int) viewStep {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, fmt.Sprintf("%sstep/%d", url, step), nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var rec viewStep
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&rec))
	return rec
}

func TestBinaryView(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	j := filepath.Join(dir, "run.jsonl")
	c := start(t, nil, "hanoi", "--disks", "7", "--journal", j, "--progress", "off")
	require.Equal(t, 0, c.wait(t, time.Minute), c.stderr.String())

	t.Run("bad journal paths exit 2", func(t *testing.T) {
		notJournal := filepath.Join(dir, "notes.txt")
		require.NoError(t, os.WriteFile(notJournal, []byte("hello\n"), 0o600))
		for path, says := range map[string]string{filepath.Join(dir, "missing.jsonl"): "no such file", notJournal: "not a journal", dir: "an export is of one run's journal"} {
			c := start(t, nil, "view", path, "--png", filepath.Join(dir, "x.png"))
			assert.Equal(t, 2, c.wait(t, time.Minute), path)
			assert.Contains(t, c.stderr.String(), says, path)
			assert.Contains(t, c.stderr.String(), path)
			assert.NoFileExists(t, filepath.Join(dir, "x.png"))
		}
	})

	t.Run("--png and --html", func(t *testing.T) {
		out, report := filepath.Join(dir, "map.png"), filepath.Join(dir, "report.html")
		c := start(t, nil, "view", j, "--png", out, "--html", report)
		require.Equal(t, 0, c.wait(t, time.Minute), c.stderr.String())
		f, err := os.Open(out)
		require.NoError(t, err)
		defer f.Close()
		img, err := png.Decode(f)
		require.NoError(t, err)
		assert.Equal(t, 8, img.Bounds().Dx(), "127 steps: 8 × 16 cells")
		assert.Equal(t, 16, img.Bounds().Dy())
		for _, f := range []string{out, report} {
			st, err := os.Stat(f)
			require.NoError(t, err)
			assert.Equal(t, os.FileMode(0o600), st.Mode().Perm(), "%s: an export is private, as its journal is", f)
		}
		html, err := os.ReadFile(report)
		require.NoError(t, err)
		assert.Contains(t, string(html), "data:image/png;base64,")
		assert.NotContains(t, string(html), "<script")
	})

	t.Run("serves until SIGINT, then 130, with a token on loopback too", func(t *testing.T) {
		c := start(t, nil, "view", j)
		url := viewURL(t, c)
		assert.True(t, strings.HasPrefix(url, "http://127.0.0.1:"), url)
		code, _ := getState(t, url, "")
		assert.Equal(t, http.StatusUnauthorized, code, "any user of the machine reaches a loopback port")
		code, st := getState(t, url, viewToken(t, c))
		require.Equal(t, http.StatusOK, code)
		assert.Equal(t, 127, st.Stats.Steps)
		assert.Equal(t, "hanoi:N=7", st.Stats.Task)
		// A step's race, read from the journal: each sample with its
		// class and model, the winner's votes marked.
		for _, step := range []int{0, 63, 126} {
			rec := getStep(t, url, viewToken(t, c), step)
			require.NotEmpty(t, rec.Samples, "step %d", step)
			wins := 0
			for _, x := range rec.Samples {
				assert.NotEmpty(t, x.Class, "step %d", step)
				assert.Contains(t, x.Model, "sim", "step %d", step)
				assert.Positive(t, x.InputTokens, "step %d", step)
				if x.Winner {
					wins++
				}
			}
			assert.Equal(t, rec.Votes[rec.Key], wins, "step %d", step)
		}
		require.NoError(t, c.cmd.Process.Signal(syscall.SIGINT))
		assert.Equal(t, 130, c.wait(t, 30*time.Second))
	})

	t.Run("--no-auth: loopback only", func(t *testing.T) {
		c := start(t, nil, "view", j, "--no-auth")
		code, st := getState(t, viewURL(t, c), "")
		require.Equal(t, http.StatusOK, code)
		assert.Equal(t, 127, st.Stats.Steps)
		require.NoError(t, c.cmd.Process.Signal(syscall.SIGINT))
		assert.Equal(t, 130, c.wait(t, 30*time.Second))
		c = start(t, nil, "view", j, "--no-auth", "--addr", "0.0.0.0:0")
		assert.Equal(t, 2, c.wait(t, 30*time.Second))
		assert.Contains(t, c.stderr.String(), "--no-auth serves on a loopback --addr only")
	})

	t.Run("another host needs the token it prints", func(t *testing.T) {
		c := start(t, nil, "view", j, "--addr", "0.0.0.0:0")
		url := viewURL(t, c)
		m := regexp.MustCompile(`Bearer ([0-9a-f]{64})`).FindStringSubmatch(c.stderr.String())
		require.Len(t, m, 2, c.stderr.String())
		local := "http://127.0.0.1:" + url[strings.LastIndex(url[:len(url)-1], ":")+1:]
		code, _ := getState(t, local, "")
		assert.Equal(t, http.StatusUnauthorized, code)
		code, st := getState(t, local, m[1])
		assert.Equal(t, http.StatusOK, code)
		assert.Equal(t, 127, st.Stats.Steps)
		require.NoError(t, c.cmd.Process.Signal(syscall.SIGINT))
		assert.Equal(t, 130, c.wait(t, 30*time.Second))
	})
}

// maker hanoi --ui: the page answers while the run goes, and its event
// stream carries the steps as they are decided.
func TestBinaryHanoiUI(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	j := filepath.Join(dir, "run.jsonl")
	c := start(t, nil, "hanoi", "--disks", "12", "--ui", "127.0.0.1:0", "--latency", "1ms", "--journal", j, "--progress", "off")
	url := viewURL(t, c)
	token := viewToken(t, c)
	req, err := http.NewRequest(http.MethodGet, url+"events", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	var steps []int
	for sc.Scan() && len(steps) < 3 {
		if line := sc.Text(); strings.HasPrefix(line, "data: {\"source\"") {
			var st struct {
				Steps int `json:"steps"`
			}
			require.NoError(t, json.Unmarshal([]byte(line[len("data: "):]), &st))
			steps = append(steps, st.Steps)
		}
	}
	require.Len(t, steps, 3)
	assert.Less(t, steps[0], steps[2], "the counters advance: %v", steps)
	code, st := getState(t, url, token)
	require.Equal(t, http.StatusOK, code)
	assert.Equal(t, 4095, st.Stats.Total)
	assert.Less(t, st.Stats.Steps, 4095, "the run goes on")
	// The journal the run holds locked is read all the same.
	v := start(t, nil, "view", j, "--png", filepath.Join(dir, "running.png"))
	assert.Equal(t, 0, v.wait(t, time.Minute), v.stderr.String())
	assert.FileExists(t, filepath.Join(dir, "running.png"))
	require.NoError(t, c.cmd.Process.Signal(syscall.SIGINT))
	assert.Equal(t, 130, c.wait(t, 30*time.Second))

	// A bad --ui writes nothing: no journal.
	j2 := filepath.Join(dir, "never.jsonl")
	c = start(t, nil, "hanoi", "--disks", "3", "--ui", "nonsense", "--journal", j2)
	assert.Equal(t, 2, c.wait(t, time.Minute))
	assert.Contains(t, c.stderr.String(), "--ui")
	assert.NoFileExists(t, j2)
}

// docs/view.md: a $MDAP_VIEW_TOKEN a cookie cannot hold, or too short,
// is refused with exit status 2 before anything listens.
func TestBinaryViewRefusesABadToken(t *testing.T) {
	t.Parallel()
	j := filepath.Join(t.TempDir(), "run.jsonl")
	c := start(t, nil, "hanoi", "--disks", "2", "--journal", j, "--progress", "off")
	require.Equal(t, 0, c.wait(t, time.Minute), c.stderr.String())
	for _, tok := range []string{"short", "has;semicolon-and-is-long-enough"} {
		cmd := exec.Command(binary, "view", j, "--addr", "0.0.0.0:0")
		cmd.Env = append(os.Environ(), "MDAP_VIEW_TOKEN="+tok)
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		require.ErrorAs(t, err, &ee, "%s", out)
		assert.Equal(t, 2, ee.ExitCode(), "%s", out)
		assert.Contains(t, string(out), "MDAP_VIEW_TOKEN")
		assert.NotContains(t, string(out), tok, "the token is not echoed")
	}
}

// TestViewExportOfAFolderSaysHowToFix: --png and --html of a state
// folder say what is wrong and how to fix it (DEVELOPERS.md: exit 2 with
// a message naming the fix), as before view's messages moved to the
// library: name one task's journal in the folder.
func TestViewExportOfAFolderSaysHowToFix(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	code, _, errOut := cli(t, "view", dir, "--png", filepath.Join(dir, "x.png"))
	assert.Equal(t, 2, code, errOut)
	assert.Contains(t, errOut, "name one task's journal in "+dir)
}
