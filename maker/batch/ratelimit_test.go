package batch

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/models"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// hanoiServer is an OpenAI-compatible chat completions stub on loopback
// that answers Towers of Hanoi step prompts correctly, except that its
// limitAt-th request (from 1) is answered 429 with a Retry-After header
// and the body message. It records every request's arrival and task.
type hanoiServer struct {
	limitAt int
	message string

	mu       sync.Mutex
	n        int
	arrivals []arrival
	limited  time.Time // when the 429 was sent
}

type arrival struct {
	at    time.Time
	disks int
}

func (s *hanoiServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	at := time.Now()
	var req struct {
		Messages []struct {
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var parts []string
	for _, m := range req.Messages {
		var text string
		if json.Unmarshal(m.Content, &text) != nil {
			var ps []struct {
				Text string `json:"text"`
			}
			_ = json.Unmarshal(m.Content, &ps)
			for _, p := range ps {
				text += p.Text
			}
		}
		parts = append(parts, text)
	}
	prompt := strings.Join(parts, "\n\n")
	st, _, err := hanoi.ParsePrompt(prompt)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.n++
	n := s.n
	s.arrivals = append(s.arrivals, arrival{at: at, disks: st.Disks()})
	if n == s.limitAt {
		s.limited = time.Now()
	}
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if n == s.limitAt {
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = fmt.Fprintf(w, `{"error":{"message":%q,"type":"requests","code":"rate_limit_exceeded"}}`, s.message)
		return
	}
	reply, err := hanoi.Oracle{}.Correct(sim.Query{Prompt: prompt})
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	resp := map[string]any{
		"id": "x", "object": "chat.completion", "model": "tiny",
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": reply}}},
		"usage":   map[string]any{"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
	}
	_ = json.NewEncoder(w).Encode(resp)
}

// TestRateLimitFromTheServerSlowsTheWholeBatch runs four Towers of Hanoi
// tasks through maker/models' openai: client against a stub that answers
// one request 429. The assertions are about causality, not durations:
// once the 429 is seen, no call starts until the pause has passed, except
// the calls already holding a slot (at most MaxInFlight-1), and then every
// task carries on.
func TestRateLimitFromTheServerSlowsTheWholeBatch(t *testing.T) {
	const pause = 300 * time.Millisecond
	for name, c := range map[string]struct {
		message  string
		cooldown time.Duration
	}{
		"delay in the message": {"Rate limit reached for requests. Please try again in 300ms.", time.Millisecond},
		"no delay named":       {"Rate limit reached for requests.", pause},
	} {
		t.Run(name, func(t *testing.T) {
			stub := &hanoiServer{limitAt: 14, message: c.message}
			srv := httptest.NewServer(stub)
			defer srv.Close()
			model, err := models.Open("openai:tiny", models.Options{BaseURL: srv.URL, APIKey: "test", Timeout: 10 * time.Second})
			require.NoError(t, err)
			b := &Builtin{Model: func(Job, sim.Oracle, uint64) (llms.Model, error) { return model, nil }}
			const maxInFlight = 2
			l, err := NewLimits(LimitConfig{MaxInFlight: maxInFlight, Cooldown: c.cooldown, Retries: 2})
			require.NoError(t, err)
			jobs := readJobs(t, `{"id": "a", "hanoi": {"disks": 2}}
{"id": "b", "hanoi": {"disks": 3}}
{"id": "c", "hanoi": {"disks": 4}}
{"id": "d", "hanoi": {"disks": 5}}`)
			sum, err := (&Runner{Build: b.Build, Concurrency: 4, Limits: l}).Run(context.Background(), jobs)
			require.NoError(t, err)
			assert.Equal(t, 4, sum.Solved, "the 429 was retried after the pause: nothing failed")
			for _, r := range sum.Results {
				assert.Zero(t, r.Errors, "%s: a retried 429 never reaches the step's error budget", r.ID)
				assert.Equal(t, 3*r.Steps, r.Samples, "%s: the stub is always right: k samples a step", r.ID)
			}
			st := l.Stats()
			assert.Equal(t, int64(1), st.RateLimited)
			assert.Equal(t, int64(1), st.Retried)
			assert.LessOrEqual(t, st.PeakInFlight, int64(maxInFlight))

			stub.mu.Lock()
			defer stub.mu.Unlock()
			require.False(t, stub.limited.IsZero())
			// The pause runs from the moment the client saw the 429, which
			// on a loaded machine is later than the stub sent it: calls
			// started in between had not seen it yet.
			end := l.PausedUntil()
			seen := end.Add(-pause)
			require.False(t, seen.Before(stub.limited), "the pause began when the 429 was seen, not before it was sent")
			inside := 0
			after := map[int]int{}
			before := map[int]int{}
			for _, a := range stub.arrivals {
				switch {
				case a.at.After(seen) && a.at.Before(end):
					inside++
				case !a.at.After(seen):
					before[a.disks]++
				default:
					after[a.disks]++
				}
			}
			assert.LessOrEqual(t, inside, maxInFlight-1, "only calls that held a slot before the 429 arrive during the pause")
			// Which tasks the scheduler had started by the 429 depends on
			// the machine's load; what must hold is that the pause held
			// the batch, not one task: more than one task was waiting and
			// carried on after it.
			assert.NotEmpty(t, before, "tasks ran before the 429")
			assert.GreaterOrEqual(t, len(after), 2, "several tasks carried on after the pause: %v", after)
			assert.Positive(t, st.Paused, "calls waited for the pause")
		})
	}
}
