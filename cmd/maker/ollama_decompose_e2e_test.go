//go:build e2e

package main

import (
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// decompositionE2E runs a small multiplication by voted decomposition on
// the tiny real model through both clients. The model writes stories, not
// products: the test asserts that the run ends honestly, with a --json
// summary, exit status 1 and the reason (a decision undecided within its
// budget, or a wrong answer), never exit 0 with a wrong answer, and that
// the samples count every call the server answered.
func decompositionE2E(t *testing.T, base, name string) {
	for _, c := range []struct{ spec, url string }{{"ollama:" + name, ""}, {"openai:" + name, "/v1"}} {
		proxy := newUsageProxy(t, base)
		began := time.Now()
		cmd := start(t, nil, "multiply", "--a", "12", "--b", "34", "--model", c.spec, "--base-url", proxy.URL+c.url,
			"--k", "atomic=2,decompose=2,solve=2,compose=2", "--max-samples", "6", "--max-tokens", "24", "--json")
		code := cmd.wait(t, 3*time.Minute)
		var s decompJSON
		require.NoError(t, json.Unmarshal(cmd.stdout.Bytes(), &s), "stdout %q, stderr %q", cmd.stdout.String(), cmd.stderr.String())
		t.Logf("maker multiply --model %s: exit %d in %s, solved %v, answer %s, %d samples (server calls %d); %s", c.spec, code, time.Since(began).Round(time.Millisecond), s.Solved, s.Answer, s.Samples, proxy.calls, s.Error)
		if s.Solved {
			assert.Equal(t, 0, code)
			assert.JSONEq(t, `"408"`, string(s.Answer), "solved means the exact product")
		} else {
			assert.Equal(t, 1, code, cmd.stderr.String())
			assert.NotEmpty(t, s.Error, "the summary says why")
			assert.Contains(t, cmd.stderr.String(), "maker: ")
		}
		// Every call the server answered was launched by a decision, made
		// or failed, and the result counts both (a failed decision's
		// samples too): at least the calls the server answered.
		assert.GreaterOrEqual(t, s.Samples, proxy.calls, "%s: every server call is a counted sample", c.spec)
		assert.Positive(t, s.Samples, c.spec)
	}
}

// problemSpecE2E runs a problem spec's problem (a sum, with the spec's
// role prompts and schemas, no checker) on the tiny real model: it ends
// honestly, exit 0 only with an answer that fits the spec's answer schema
// (an integer), else exit 1 with the reason, and its samples count every
// call the server answered.
func problemSpecE2E(t *testing.T, base, name string) {
	spec := filepath.Join("..", "..", "maker", "problems", "testdata", "sum-spec.json")
	proxy := newUsageProxy(t, base)
	began := time.Now()
	cmd := start(t, nil, "problem", "--spec", spec, "--input", `{"n": [1, 2, 3]}`, "--model", "ollama:"+name, "--base-url", proxy.URL,
		"--k", "atomic=2,decompose=2,discriminate=2,solve=2,compose=2", "--max-samples", "6", "--max-tokens", "24", "--json")
	code := cmd.wait(t, 3*time.Minute)
	var s decompJSON
	require.NoError(t, json.Unmarshal(cmd.stdout.Bytes(), &s), "stdout %q, stderr %q", cmd.stdout.String(), cmd.stderr.String())
	t.Logf("maker problem --spec sum-spec.json: exit %d in %s, solved %v, answer %s, %d samples (server calls %d); %s", code, time.Since(began).Round(time.Millisecond), s.Solved, s.Answer, s.Samples, proxy.calls, s.Error)
	assert.Nil(t, s.Correct, "a spec without a checker: not checked")
	if s.Solved {
		assert.Equal(t, 0, code)
		var n int
		assert.NoError(t, json.Unmarshal(s.Answer, &n), "an answer that fits the spec's schema: %s", s.Answer)
	} else {
		assert.Equal(t, 1, code, cmd.stderr.String())
		assert.NotEmpty(t, s.Error, "the summary says why")
	}
	assert.GreaterOrEqual(t, s.Samples, proxy.calls, "every server call is a counted sample")
	assert.Positive(t, proxy.calls)
}
