package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mdap-go/mdap/internal/keyecho"
	"github.com/mdap-go/mdap/maker/journal"
)

// secretForms are the ways a secret may be written, listed here apart
// from internal/secrets: as it is, as encoding/json writes it inside a
// string (with and without HTML escaping), percent-encoded as a query
// or a path (hex digits in either case); and its tail, so that a cut
// secret counts too.
func secretForms(t *testing.T, secret string) []string {
	t.Helper()
	html, err := json.Marshal(secret)
	require.NoError(t, err)
	var plain bytes.Buffer
	enc := json.NewEncoder(&plain)
	enc.SetEscapeHTML(false)
	require.NoError(t, enc.Encode(secret))
	out := []string{secret, secret[4:], strings.Trim(string(html), `"`), strings.Trim(strings.TrimSpace(plain.String()), `"`)}
	for _, p := range []string{url.QueryEscape(secret), url.PathEscape(secret)} {
		out = append(out, p, strings.ToLower(p))
	}
	return out
}

// noSecret fails t when text holds a form of a secret, or the proxy's
// user name (userinfo is never kept or shown).
func noSecret(t *testing.T, where, text string, forms []string) {
	t.Helper()
	for _, f := range forms {
		assert.NotContains(t, text, f, "%s holds a secret's form %q", where, f)
	}
}

// TestBinaryNoSecretAtRest runs every command that takes a model (hanoi,
// run, solve, calibrate, mcp's run_task) with a base URL carrying a
// proxy's user:password@ (in --base-url and in ;base=) and a ;key= key
// holding + / =, against a loopback server that refuses the key and
// echoes it percent-encoded: no form of the password, the key or the
// user name is in stdout, stderr, --json, a JSON log, an MCP result, a
// journal, a results file or any file under the state folder; journals
// are written, their model named without userinfo.
func TestBinaryNoSecretAtRest(t *testing.T) {
	t.Parallel()
	const key = "sk-live+Secret/Key=42xq9"
	const password = "pw+Se/cret@9z"
	srv := keyecho.NewPercentServer(t)
	u, err := url.Parse(srv.URL + "/v1")
	require.NoError(t, err)
	u.User = url.UserPassword("proxyuser", password)
	base := u.String()
	forms := append(secretForms(t, key), secretForms(t, password)...)
	forms = append(forms, "proxyuser")
	const model = "openai:gpt-x;key=MDAP_TEST_TEAM_KEY"
	specs, err := filepath.Abs(filepath.Join("..", "..", "testdata", "spec"))
	require.NoError(t, err)

	// scan checks every file under dir and returns the journals found.
	scan := func(t *testing.T, dir string) []string {
		t.Helper()
		var journals []string
		require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := os.ReadFile(p)
			require.NoError(t, err)
			noSecret(t, p, string(b), forms)
			if bytes.HasPrefix(b, []byte(`{"mdap_journal":`)) {
				journals = append(journals, p)
				fi, err := os.Stat(p)
				require.NoError(t, err)
				assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "%s: only its owner reads a journal", p)
				assert.Contains(t, string(b), `"model":"openai:gpt-x@`+srv.URL+`/v1"`, "%s names the model without userinfo", p)
			}
			return nil
		}))
		if fi, err := os.Stat(filepath.Join(dir, "journals")); err == nil {
			assert.Equal(t, os.FileMode(0o700), fi.Mode().Perm(), "the --state folder of solve and mcp")
		}
		return journals
	}
	for _, c := range []struct {
		name     string
		args     func(dir string) []string
		journals int
		echoed   bool // the command prints the server's error text
	}{
		{"hanoi", func(dir string) []string {
			return []string{"hanoi", "--disks", "3", "--model", model, "--base-url", base, "--journal", filepath.Join(dir, "j.jsonl"), "--json", "--verbose", "--progress", "off"}
		}, 1, true},
		{"hanoi ;base=, JSON log", func(dir string) []string {
			return []string{"hanoi", "--disks", "3", "--model", "openai:gpt-x;base=" + base + ";key=MDAP_TEST_TEAM_KEY", "--journal", filepath.Join(dir, "j.jsonl"), "--log-format", "json", "--verbose", "--progress", "off"}
		}, 1, true},
		{"run", func(dir string) []string {
			return []string{"run", filepath.Join(specs, "find-version.json"), "--model", model, "--base-url", base, "--journal", filepath.Join(dir, "r.jsonl"), "--json", "--progress", "off"}
		}, 1, true},
		{"solve", func(dir string) []string {
			tasks := filepath.Join(dir, "tasks.jsonl")
			require.NoError(t, os.WriteFile(tasks, []byte(`{"id":"h3","hanoi":{"disks":3}}`+"\n"), 0o600))
			return []string{"solve", tasks, "--out", filepath.Join(dir, "results.jsonl"), "--state", filepath.Join(dir, "journals"), "--model", model, "--base-url", base, "--json"}
		}, 1, true},
		{"calibrate", func(dir string) []string {
			return []string{"calibrate", "--disks", "3", "--steps-sampled", "2", "--samples", "2", "--model", model, "--base-url", base, "--json"}
		}, 0, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			cmd := commandWithEnv(binary, []string{"MDAP_TEST_TEAM_KEY=" + key, journal.StateDirEnv + "=" + filepath.Join(dir, "state")}, c.args(dir)...)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			var ee *exec.ExitError
			require.ErrorAs(t, err, &ee, "the refused key fails the command: %s", stderr.String())
			out := stdout.String() + stderr.String()
			if c.echoed {
				assert.Contains(t, out, "[REDACTED]", "the server echoed the key: %s", out)
			}
			noSecret(t, "the output", out, forms)
			assert.Len(t, scan(t, dir), c.journals)
		})
	}

	t.Run("mcp run_task", func(t *testing.T) {
		dir := t.TempDir()
		cmd := commandWithEnv(binary, []string{"MDAP_TEST_TEAM_KEY=" + key, journal.StateDirEnv + "=" + filepath.Join(dir, "state")},
			"mcp", "--root", specs, "--state", filepath.Join(dir, "journals"), "--model", model, "--base-url", base, "--log-level", "debug")
		stderr := &syncBuffer{}
		cmd.Stderr = stderr
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "secret-test"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
		require.NoError(t, err)
		res := callTool(t, ctx, cs, "run_task", map[string]any{"spec_path": "find-version.json", "journal": "f.jsonl"}, "")
		require.NoError(t, cs.Close())
		b, err := json.Marshal(res)
		require.NoError(t, err)
		assert.True(t, res.IsError, "the refused key fails the run: %s", b)
		assert.Contains(t, string(b), "[REDACTED]", "the server echoed the key: %s", b)
		noSecret(t, "the tool result", string(b), forms)
		noSecret(t, "stderr", stderr.String(), forms)
		assert.Len(t, scan(t, dir), 1)
	})
}
