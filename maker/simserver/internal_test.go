package simserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFaultFractionsAndReproducibility(t *testing.T) {
	t.Parallel()
	f := Faults{RateLimit: 0.05, ServerError: 0.1, Hang: 0.02, Truncate: 0.08, Garbage: 0.15}
	s, err := New(Config{Oracle: hanoi.Oracle{}, Sim: sim.Config{Seed: 3, P: 1}, Faults: f})
	require.NoError(t, err)
	const n = 200000
	counts := map[faultKind]int{}
	for i := range n {
		counts[s.drawFault(requestID{step: i % 97, index: i / 97})]++
	}
	for kind, p := range map[faultKind]float64{faultRateLimit: 0.05, faultServerError: 0.1, faultHang: 0.02, faultTruncate: 0.08, faultGarbage: 0.15, faultNone: 0.6} {
		assert.InDelta(t, p, float64(counts[kind])/n, 0.004, kind.String())
	}

	// The same (seed, step, index), the same fault; another seed, others.
	again, err := New(Config{Oracle: hanoi.Oracle{}, Sim: sim.Config{Seed: 3, P: 1}, Faults: f})
	require.NoError(t, err)
	other, err := New(Config{Oracle: hanoi.Oracle{}, Sim: sim.Config{Seed: 4, P: 1}, Faults: f})
	require.NoError(t, err)
	differ := 0
	for i := range 2000 {
		id := requestID{step: i * 7919, index: i % 13}
		assert.Equal(t, s.drawFault(id), again.drawFault(id))
		if s.drawFault(id) != other.drawFault(id) {
			differ++
		}
	}
	assert.Greater(t, differ, 500)

	none, err := New(Config{Oracle: hanoi.Oracle{}, Sim: sim.Config{P: 1}})
	require.NoError(t, err)
	for i := range 1000 {
		assert.Equal(t, faultNone, none.drawFault(requestID{step: i, index: i}), "no faults configured: never a fault")
	}
	all, err := New(Config{Oracle: hanoi.Oracle{}, Sim: sim.Config{P: 1}, Faults: Faults{Garbage: 1}})
	require.NoError(t, err)
	for i := range 1000 {
		assert.Equal(t, faultGarbage, all.drawFault(requestID{step: i, index: i}), "a fraction of 1: always")
	}
}

func TestGarbageIsNeverJSON(t *testing.T) {
	t.Parallel()
	for i := range 3000 {
		g := garbage(uint64(i%7), requestID{step: i, index: i * 3})
		assert.False(t, json.Valid([]byte(g)), "%q", g)
	}
}

// fuzzSeeds are request bodies of every shape the parser meets.
var fuzzSeeds = []string{
	``, `{}`, `[]`, `null`, `{"messages":[]}`, `{"messages":null}`,
	`{"model":"sim","messages":[{"role":"user","content":"hi"}]}`,
	`{"messages":[{"role":"system","content":"a"},{"role":"user","content":[{"type":"text","text":"b"},{"type":"image_url","image_url":{"url":"x"}}]}],"n":3,"seed":-5,"max_tokens":10,"max_completion_tokens":0}`,
	`{"messages":[{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c","content":"r"}]}`,
	`{"messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"grep","parameters":{"type":"object"}}}],"tool_choice":{"type":"function","function":{"name":"grep"}}}`,
	`{"messages":[{"role":"user","content":"x"}],"tool_choice":"none","temperature":1.5,"stream":false}`,
	`{"messages":[{"role":"user","content":"x"}],"n":128,"max_tokens":131072}`,
	`{"messages":[{"role":"user","content":[{"type":5}]}]}`,
	`{"messages":[{"role":"user","content":"x"}]} trailing`,
	`{"messages":[{"role":"user","content":"x"}],"max_tokens":1e400}`,
	`{"messages":[{"role":"user","content":"\ud800"}],"seed":9223372036854775807}`,
}

// FuzzParseRequest: the request-body parser never panics, every refusal
// wraps errRequest and names its field, and what it accepts is within the
// bounds the handler relies on; the whole handler answers a fuzzed body
// with a 200 completion or a 4xx OpenAI error, never a panic or a 5xx.
func FuzzParseRequest(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	task, err := hanoi.New(3)
	if err != nil {
		f.Fatal(err)
	}
	step, err := json.Marshal(map[string]any{"messages": []map[string]string{
		{"role": "system", "content": hanoi.SystemPrompt},
		{"role": "user", "content": hanoi.UserPrompt(3, task.State(), nil)},
	}, "n": 2, "max_tokens": 40})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(step)
	srv, err := New(Config{Oracle: hanoi.Oracle{}, Sim: sim.Config{Seed: 1, P: 0.5, FlagRate: 0.3, WrongAnswers: 3}})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if len(body) > 64<<10 {
			t.Skip("bounded input")
		}
		req, err := parseRequest(body)
		if err != nil {
			var re *requestErr
			if !errors.Is(err, errRequest) || !errors.As(err, &re) {
				t.Fatalf("error %v does not wrap errRequest", err)
			}
		} else {
			switch {
			case req.n < 1 || req.n > MaxChoices:
				t.Fatalf("n = %d accepted", req.n)
			case req.maxTokens < 0 || req.maxTokens > MaxTokensLimit:
				t.Fatalf("max tokens %d accepted", req.maxTokens)
			case req.n*max(req.maxTokens, defaultCap) > maxReplyTokens:
				t.Fatalf("n %d x cap %d accepted", req.n, req.maxTokens)
			case len(req.Messages) == 0:
				t.Fatal("no messages accepted")
			case len(req.messages()) != len(req.Messages):
				t.Fatal("messages lost")
			}
		}

		if err == nil && req.n*max(req.maxTokens, defaultCap) > 1<<14 {
			return // answering builds up to 6 MB of text: slow under the fuzzer, and no other path
		}
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v1/chat/completions", bytes.NewReader(body)))
		if err != nil && rec.Code != http.StatusBadRequest {
			t.Fatalf("parse error %v but status %d", err, rec.Code)
		}
		if rec.Code != http.StatusOK && rec.Code != http.StatusBadRequest {
			t.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
		var out map[string]json.RawMessage
		if json.Unmarshal(rec.Body.Bytes(), &out) != nil {
			t.Fatalf("the answer is not JSON: %q", rec.Body)
		}
		if _, ok := out["error"]; rec.Code != http.StatusOK && !ok {
			t.Fatalf("a %d without an OpenAI error: %s", rec.Code, rec.Body)
		}
	})
}
