package simserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mdap-go/mdap/internal/fielderr"
	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/mdap-go/mdap/maker/simserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestModelsEndpoint(t *testing.T) {
	t.Parallel()
	_, base := serve(t, hanoiConfig(sim.DefaultConfig()))
	code, body := get(t, base+"/models")
	assert.Equal(t, http.StatusOK, code)
	assert.Equal(t, "list", body["object"])
	data := body["data"].([]any)
	require.Len(t, data, 1)
	assert.Equal(t, "sim", data[0].(map[string]any)["id"])
	assert.Equal(t, "model", data[0].(map[string]any)["object"])

	code, body = get(t, base+"/models/sim")
	assert.Equal(t, http.StatusOK, code)
	assert.Equal(t, "sim", body["id"])

	code, body = get(t, base+"/models/gpt-4")
	assert.Equal(t, http.StatusNotFound, code)
	assert.Equal(t, "model_not_found", errorOf(t, body)["code"])

	code, body = get(t, strings.TrimSuffix(base, "/v1")+"/models") // without /v1 too
	assert.Equal(t, http.StatusOK, code)
	assert.Equal(t, "list", body["object"])

	code, body = get(t, base+"/embeddings")
	assert.Equal(t, http.StatusNotFound, code)
	assert.Contains(t, errorOf(t, body)["message"], "POST /v1/chat/completions")

	code, hdr, body := post(t, base+"/models", "{}")
	assert.Equal(t, http.StatusMethodNotAllowed, code)
	assert.Equal(t, "GET", hdr.Get("Allow"))
	errorOf(t, body)

	code, body = get(t, base+"/chat/completions")
	assert.Equal(t, http.StatusMethodNotAllowed, code)
	errorOf(t, body)
}

func TestChatCompletionShape(t *testing.T) {
	t.Parallel()
	_, base := serve(t, hanoiConfig(sim.Config{Seed: 1, P: 1}))
	msgs := firstStep(t, 3)
	code, _, body := post(t, base+"/chat/completions", map[string]any{
		"model": "my-model", "messages": wire(msgs), "max_tokens": 750, "temperature": 0.1, "n": 3, "seed": 7,
		"top_p": 1, "user": "someone", // ignored fields
	})
	require.Equal(t, http.StatusOK, code, "%v", body)
	assert.Equal(t, "chat.completion", body["object"])
	assert.Equal(t, "my-model", body["model"], "the request's model is echoed")
	assert.Regexp(t, `^chatcmpl-sim-[0-9a-f]{16}$`, body["id"])
	assert.Regexp(t, `^fp_sim_[0-9a-f]{16}$`, body["system_fingerprint"])
	assert.IsType(t, float64(0), body["created"])
	choices := body["choices"].([]any)
	require.Len(t, choices, 3)
	completion := 0
	for j, c := range choices {
		c := c.(map[string]any)
		assert.Equal(t, float64(j), c["index"])
		assert.Equal(t, "stop", c["finish_reason"])
		m := c["message"].(map[string]any)
		assert.Equal(t, "assistant", m["role"])
		text := m["content"].(string)
		a, err := hanoi.ParseReply(text, 3)
		require.NoError(t, err)
		assert.Equal(t, hanoi.Move{Disk: 1, From: 0, To: 2}, a.Move, "p = 1: the right move")
		completion += maker.EstimateTokens(text)
	}
	u := body["usage"].(map[string]any)
	prompt := maker.EstimateTokens(sim.PromptText(msgs))
	assert.Equal(t, float64(prompt), u["prompt_tokens"], "the prompt counted once")
	assert.Equal(t, float64(completion), u["completion_tokens"], "every choice's reply")
	assert.Equal(t, float64(prompt+completion), u["total_tokens"])
}

func TestTokenCapsAndLength(t *testing.T) {
	t.Parallel()
	_, base := serve(t, hanoiConfig(sim.Config{Seed: 1, P: 1}))
	msgs := wire(firstStep(t, 3))
	ask := func(extra map[string]any) map[string]any {
		req := map[string]any{"messages": msgs, "seed": 1}
		for k, v := range extra {
			req[k] = v
		}
		code, _, body := post(t, base+"/chat/completions", req)
		require.Equal(t, http.StatusOK, code, "%v", body)
		return body
	}
	choice := func(body map[string]any) (string, string) {
		c := body["choices"].([]any)[0].(map[string]any)
		return c["message"].(map[string]any)["content"].(string), c["finish_reason"].(string)
	}
	for _, field := range []string{"max_tokens", "max_completion_tokens"} {
		body := ask(map[string]any{field: 3})
		text, finish := choice(body)
		assert.Equal(t, "length", finish, field)
		assert.Len(t, text, 12, "%s: cut at 3 tokens of 4 bytes", field)
		assert.Equal(t, float64(3), body["usage"].(map[string]any)["completion_tokens"], field)
	}
	// max_completion_tokens wins over the deprecated max_tokens.
	_, finish := choice(ask(map[string]any{"max_tokens": 3, "max_completion_tokens": 750}))
	assert.Equal(t, "stop", finish)
	_, finish = choice(ask(map[string]any{"max_tokens": 750, "max_completion_tokens": 3}))
	assert.Equal(t, "length", finish)
}

func TestBadRequests(t *testing.T) {
	t.Parallel()
	_, base := serve(t, hanoiConfig(sim.DefaultConfig()))
	msgs := wire(firstStep(t, 3))
	with := func(k string, v any) map[string]any { return map[string]any{"messages": msgs, k: v} }
	for name, tc := range map[string]struct {
		body  any
		param string
	}{
		"not json":           {`{"messages": [`, ""},
		"not an object":      {`[1, 2]`, ""},
		"trailing data":      {`{"messages": []} {}`, ""},
		"no messages":        {`{"model": "sim"}`, "messages"},
		"empty messages":     {with("messages", []any{}), "messages"},
		"bad role":           {with("messages", []any{map[string]any{"role": "robot", "content": "x"}}), "messages[0].role"},
		"bad content":        {with("messages", []any{map[string]any{"role": "user", "content": 5}}), "messages[0].content"},
		"bad part":           {with("messages", []any{map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": 5}}}}), "messages[0].content"},
		"max_tokens < 0":     {with("max_tokens", -1), "max_tokens"},
		"max_tokens huge":    {with("max_tokens", 1<<30), "max_tokens"},
		"max_tokens float":   {with("max_tokens", 1.5), "max_tokens"},
		"max_completion < 0": {with("max_completion_tokens", -5), "max_completion_tokens"},
		"temperature":        {with("temperature", 2.5), "temperature"},
		"n zero":             {with("n", 0), "n"},
		"n too many":         {with("n", 129), "n"},
		"n times cap":        {map[string]any{"messages": msgs, "n": 128, "max_tokens": 100000}, "n"},
		"seed not int":       {with("seed", "x"), "seed"},
		"stream":             {with("stream", true), "stream"},
		"tool type":          {with("tools", []any{map[string]any{"type": "retrieval"}}), "tools[0].type"},
		"tool name":          {with("tools", []any{map[string]any{"type": "function", "function": map[string]any{}}}), "tools[0].function.name"},
		"tool_choice":        {with("tool_choice", "always"), "tool_choice"},
		"tool_choice number": {with("tool_choice", 3), "tool_choice"},
	} {
		code, _, body := post(t, base+"/chat/completions", tc.body)
		assert.Equal(t, http.StatusBadRequest, code, name)
		e := errorOf(t, body)
		assert.Equal(t, "invalid_request_error", e["type"], name)
		if tc.param == "" {
			assert.Nil(t, e["param"], name)
		} else {
			assert.Equal(t, tc.param, e["param"], name)
			assert.True(t, strings.HasPrefix(e["message"].(string), tc.param+": "), "%s: %s", name, e["message"])
		}
	}

	// A prompt that is not one of the task's steps.
	code, _, body := post(t, base+"/chat/completions", map[string]any{"messages": []any{map[string]any{"role": "user", "content": "hello"}}})
	assert.Equal(t, http.StatusBadRequest, code)
	assert.Equal(t, "unknown_prompt", errorOf(t, body)["code"])
}

func TestBodyLimit(t *testing.T) {
	t.Parallel()
	s, base := serve(t, hanoiConfig(sim.DefaultConfig()))
	over := `{"messages": [{"role": "user", "content": "` + strings.Repeat("a", simserver.DefaultMaxBodyBytes) + `"}]}`
	code, _, body := post(t, base+"/chat/completions", over)
	assert.Equal(t, http.StatusRequestEntityTooLarge, code)
	assert.Equal(t, "request_too_large", errorOf(t, body)["code"])
	assert.Equal(t, uint64(1), s.Stats().BadRequests)

	s, base = serve(t, simserver.Config{Oracle: hanoi.Oracle{}, Sim: sim.DefaultConfig(), MaxBodyBytes: 100})
	code, _, _ = post(t, base+"/chat/completions", `{"messages": [{"role": "user", "content": "`+strings.Repeat("a", 100)+`"}]}`)
	assert.Equal(t, http.StatusRequestEntityTooLarge, code)
	// Exactly at the limit is read (and refused for its prompt, not its size).
	head, tail := `{"messages":[{"role":"user","content":"`, `"}]}`
	exact := head + strings.Repeat("a", 100-len(head)-len(tail)) + tail
	require.Len(t, exact, 100)
	code, _, body = post(t, base+"/chat/completions", exact)
	assert.Equal(t, http.StatusBadRequest, code)
	assert.Equal(t, "unknown_prompt", errorOf(t, body)["code"])
	assert.Equal(t, uint64(2), s.Stats().BadRequests)
}

func TestContentPartsReadAsTheirText(t *testing.T) {
	t.Parallel()
	// A message whose content is an array of parts gives the same prompt,
	// and so the same reply, as the text in one string: the parts are
	// joined as sim.PromptText joins them; non-text parts are left out.
	_, base := serve(t, hanoiConfig(mixed(3)))
	msgs := firstStep(t, 4)
	sys, user := wire(msgs)[0]["content"].(string), wire(msgs)[1]["content"].(string)
	reply := func(messages []any, seed int) []any {
		code, _, body := post(t, base+"/chat/completions", map[string]any{"messages": messages, "seed": seed})
		return []any{code, body["choices"], body["error"]}
	}
	for seed := range 20 {
		plain := reply([]any{map[string]any{"role": "system", "content": sys}, map[string]any{"role": "user", "content": user}}, seed)
		parts := reply([]any{map[string]any{"role": "developer", "content": []any{
			map[string]any{"type": "text", "text": sys},
			map[string]any{"type": "image_url", "image_url": map[string]any{"url": "http://x/y.png"}},
		}}, map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": user}}}}, seed)
		assert.Equal(t, plain, parts, "seed %d", seed)
	}
}

func TestProviderErrorsAre500(t *testing.T) {
	t.Parallel()
	s, base := serve(t, hanoiConfig(sim.Config{Seed: 1, P: 1, ErrorRate: 1}))
	code, _, body := post(t, base+"/chat/completions", map[string]any{"messages": wire(firstStep(t, 3))})
	assert.Equal(t, http.StatusInternalServerError, code)
	e := errorOf(t, body)
	assert.Equal(t, "server_error", e["type"])
	assert.Equal(t, "simulated_provider_error", e["code"])
	assert.Equal(t, uint64(1), s.Stats().ProviderErrors)
}

func TestNewRefusesBadConfig(t *testing.T) {
	t.Parallel()
	for name, cfg := range map[string]simserver.Config{
		"no oracle":       {Sim: sim.DefaultConfig()},
		"bad sim":         {Oracle: hanoi.Oracle{}, Sim: sim.Config{P: 2}},
		"zero sim":        {Oracle: hanoi.Oracle{}},
		"fault above 1":   {Oracle: hanoi.Oracle{}, Sim: sim.DefaultConfig(), Faults: simserver.Faults{Hang: 1.5}},
		"fault negative":  {Oracle: hanoi.Oracle{}, Sim: sim.DefaultConfig(), Faults: simserver.Faults{Garbage: -0.1}},
		"fault sum":       {Oracle: hanoi.Oracle{}, Sim: sim.DefaultConfig(), Faults: simserver.Faults{RateLimit: 0.6, Truncate: 0.6}},
		"retry-after":     {Oracle: hanoi.Oracle{}, Sim: sim.DefaultConfig(), Faults: simserver.Faults{RetryAfter: -1}},
		"retry-after big": {Oracle: hanoi.Oracle{}, Sim: sim.DefaultConfig(), Faults: simserver.Faults{RetryAfter: simserver.MaxRetryAfter + 1}},
		"body limit":      {Oracle: hanoi.Oracle{}, Sim: sim.DefaultConfig(), MaxBodyBytes: -1},
	} {
		_, err := simserver.New(cfg)
		assert.ErrorIs(t, err, simserver.ErrConfig, name)
		assert.NotNil(t, fielderr.As(cfg.Validate()), "%s: a field error of Validate", name)
	}
	fe := fielderr.As(simserver.Config{Oracle: hanoi.Oracle{}, Sim: sim.DefaultConfig(), MaxBodyBytes: -1}.Validate())
	require.NotNil(t, fe)
	assert.Equal(t, "MaxBodyBytes", fe.Fields[0].Name)
	assert.EqualError(t, simserver.Config{Sim: sim.DefaultConfig()}.Validate(),
		"invalid configuration: simserver.Config: Oracle = <nil>: give the task's oracle (hanoi.Oracle{}, spec.Oracle{Spec: s})")
	_, err := simserver.New(simserver.Config{Oracle: hanoi.Oracle{}, Sim: sim.DefaultConfig(),
		Faults: simserver.Faults{RateLimit: 0.2, ServerError: 0.2, Hang: 0.2, Truncate: 0.2, Garbage: 0.2, RetryAfter: simserver.MaxRetryAfter}})
	assert.NoError(t, err, "fractions adding up to exactly 1")
}

func TestCheckAddr(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{"127.0.0.1:8090", "127.0.0.1:0", "127.1.2.3:80", "[::1]:8090", "localhost:8090", "LOCALHOST:1"} {
		assert.NoError(t, simserver.CheckAddr(ok, false), ok)
	}
	for _, remote := range []string{"0.0.0.0:8090", ":8090", "[::]:8090", "192.168.1.5:8090", "example.com:80"} {
		err := simserver.CheckAddr(remote, false)
		assert.ErrorIs(t, err, simserver.ErrRemoteAddr, remote)
		assert.NoError(t, simserver.CheckAddr(remote, true), remote)
	}
	assert.Contains(t, simserver.CheckAddr(":8090", false).Error(), "every interface")
	for _, bad := range []string{"", "127.0.0.1", "127.0.0.1:http", "127.0.0.1:65536", "127.0.0.1:-1", "127.0.0.1:", "a:b:c"} {
		assert.ErrorIs(t, simserver.CheckAddr(bad, true), simserver.ErrAddr, bad)
	}
}

func TestServeShutsDownAndReleasesHangs(t *testing.T) {
	s, err := simserver.New(simserver.Config{Oracle: hanoi.Oracle{}, Sim: sim.Config{Seed: 1, P: 1}, Faults: simserver.Faults{Hang: 1}})
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, ln) }()

	body, err := json.Marshal(map[string]any{"messages": wire(firstStep(t, 3))})
	require.NoError(t, err)
	clientErr := make(chan error, 1)
	go func() {
		resp, err := http.Post("http://"+ln.Addr().String()+"/v1/chat/completions", "application/json", bytes.NewReader(body))
		if err == nil {
			resp.Body.Close()
			err = fmt.Errorf("an answer: %s", resp.Status)
		}
		clientErr <- err
	}()
	require.Eventually(t, func() bool { return s.Stats().Hangs == 1 }, 10*time.Second, 5*time.Millisecond)
	select {
	case err := <-clientErr:
		t.Fatalf("the hanging request ended before shutdown: %v", err)
	case <-time.After(50 * time.Millisecond):
	}

	start := time.Now()
	cancel()
	select {
	case err := <-served:
		assert.NoError(t, err)
	case <-time.After(simserver.ShutdownGrace):
		t.Fatal("Serve did not return")
	}
	assert.Less(t, time.Since(start), simserver.ShutdownGrace, "the hang is released at once, not after the grace period")
	err = <-clientErr
	assert.Error(t, err, "the hanging request's connection is closed without an answer")
	assert.NotContains(t, err.Error(), "an answer:", "no answer, before the shutdown or after")
	_, err = net.Dial("tcp", ln.Addr().String())
	assert.Error(t, err, "the listener is closed")
}

func TestServeReportsListenerFailure(t *testing.T) {
	t.Parallel()
	s, err := simserver.New(hanoiConfig(sim.DefaultConfig()))
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	require.NoError(t, ln.Close())
	err = s.Serve(context.Background(), ln)
	assert.True(t, errors.Is(err, net.ErrClosed), "%v", err)
}

func TestConcurrentRequestsRaceFree(t *testing.T) {
	t.Parallel()
	// Many clients at once, with and without seeds: the handler's shared
	// state (arrival counters, statistics) is safe under -race, and every
	// request is answered.
	s, base := serve(t, hanoiConfig(mixed(9)))
	msgs := wire(firstStep(t, 4))
	var wg sync.WaitGroup
	for i := range 40 {
		wg.Go(func() {
			req := map[string]any{"messages": msgs, "n": 2}
			if i%2 == 0 {
				req["seed"] = i
			}
			b, _ := json.Marshal(req)
			resp, err := http.Post(base+"/chat/completions", "application/json", bytes.NewReader(b))
			if assert.NoError(t, err) {
				resp.Body.Close()
			}
		})
	}
	wg.Wait()
	st := s.Stats()
	assert.Equal(t, uint64(40), st.Requests)
	assert.Equal(t, st.Requests, st.Replies+st.ProviderErrors)
}

// Validate names the field, its value and the fix, as a *sim.FieldError
// a command maps to its flags; a refused total names the fractions above 0.
func TestFaultsValidateNamesTheField(t *testing.T) {
	t.Parallel()
	for f, want := range map[simserver.Faults]string{
		{Hang: 1.5}:                        "invalid configuration: simserver.Faults: Hang = 1.5: use a fraction from 0 to 1",
		{Garbage: math.NaN()}:              "invalid configuration: simserver.Faults: Garbage = NaN: use a fraction from 0 to 1",
		{RateLimit: 0.6, Truncate: 0.6}:    "invalid configuration: simserver.Faults: RateLimit = 0.6 plus Truncate = 0.6: add up to 1.2; they must add up to at most 1",
		{RetryAfter: -1}:                   "invalid configuration: simserver.Faults: RetryAfter = -1: use 0 to 3600 seconds",
		{ServerError: 1, RetryAfter: 3601}: "invalid configuration: simserver.Faults: RetryAfter = 3601: use 0 to 3600 seconds",
	} {
		err := f.Validate()
		assert.EqualError(t, err, want)
		assert.ErrorIs(t, err, simserver.ErrConfig)
		var fe *sim.FieldError
		assert.ErrorAs(t, err, &fe)
	}
}
