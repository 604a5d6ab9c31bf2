package models_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/models"
	_ "github.com/mdap-go/mdap/maker/models/all" // every provider a spec may name
	"github.com/mdap-go/mdap/vote"
)

// fakeOpenAI stands in for any OpenAI-compatible server (vLLM,
// llama.cpp, Ollama's /v1): it answers every Hanoi step correctly, with
// 100 input and 20 output tokens.
func fakeOpenAI() *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []struct{ Content string } `json:"messages"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		s, prev, _ := hanoi.ParsePrompt(req.Messages[len(req.Messages)-1].Content)
		a, _ := hanoi.CorrectAnswer(s, prev)
		content, _ := json.Marshal(a.Text())
		fmt.Fprintf(w, `{"choices":[{"message":{"role":"assistant","content":%s},"finish_reason":"stop"}],"usage":{"prompt_tokens":100,"completion_tokens":20}}`, content)
	}))
}

// A model on an OpenAI-compatible server, priced in its spec: dollars per
// million input and output tokens. A local server needs no API key.
func ExampleOpen() {
	srv := fakeOpenAI()
	defer srv.Close()

	model, err := models.Open("openai:my-model=0.15/0.60", models.Options{BaseURL: srv.URL + "/v1"})
	if err != nil {
		fmt.Println(err)
		return
	}
	task, _ := hanoi.New(3)
	s := &maker.Solver{Config: maker.Config{Vote: vote.Config{K: 2}}, Model: model}
	rep, err := s.Solve(context.Background(), task)
	fmt.Println("solved:", err == nil && task.Solved())
	fmt.Printf("%d samples, %d tokens in, %d out: $%.6f\n", rep.Launched, rep.Usage.InputTokens, rep.Usage.OutputTokens, rep.Cost)
	// Output:
	// solved: true
	// 14 samples, 1400 tokens in, 280 out: $0.000378
}

// A permanent error, here a server that is not there, stops the run at
// once, with a message that names the URL and says what to fix.
func ExampleOpen_permanentError() {
	srv := fakeOpenAI()
	url := srv.URL
	srv.Close() // nothing listens there any more

	model, err := models.Open("ollama:tiny", models.Options{BaseURL: url})
	if err != nil {
		fmt.Println(err)
		return
	}
	task, _ := hanoi.New(3)
	_, err = (&maker.Solver{Model: model}).Solve(context.Background(), task)
	fmt.Println(errors.Is(err, maker.ErrPermanent), errors.Is(err, models.ErrUnreachable))
	// Output: true true
}

func ExampleParseSpec() {
	s, _ := models.ParseSpec("openai:gpt-4o-mini=0.15/0.60")
	fmt.Println(s.Provider, s.Name, s.Price.InputPerMillion, s.Price.OutputPerMillion)
	p, _ := models.BuiltinPrice("anthropic", "claude-3-5-haiku-20241022")
	fmt.Println(p.InputPerMillion, p.OutputPerMillion)
	// Output:
	// openai gpt-4o-mini 0.15 0.6
	// 0.8 4
}
