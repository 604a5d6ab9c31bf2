package simserver_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/mdap-go/mdap/maker/simserver"
)

func ExampleNew() {
	cfg := sim.DefaultConfig()
	cfg.Seed, cfg.P, cfg.FlagRate = 1, 1, 0 // always right, for a stable output
	s, err := simserver.New(simserver.Config{Oracle: hanoi.Oracle{}, Sim: cfg})
	if err != nil {
		panic(err)
	}
	srv := httptest.NewServer(s) // or s.Serve(ctx, listener)
	defer srv.Close()
	defer s.Close()

	// Any OpenAI client can ask: here a plain HTTP request for the first
	// step of a 3-disk Towers of Hanoi.
	task, _ := hanoi.New(3)
	body, _ := json.Marshal(map[string]any{
		"model": "sim",
		"messages": []map[string]string{
			{"role": "system", "content": hanoi.SystemPrompt},
			{"role": "user", "content": hanoi.UserPrompt(3, task.State(), nil)},
		},
		"max_tokens": 750,
		"seed":       1,
	})
	resp, err := http.Post(srv.URL+"/v1/chat/completions", "application/json", bytes.NewReader(body))
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	var out struct {
		Choices []struct {
			Message      struct{ Content string }
			FinishReason string `json:"finish_reason"`
		}
		Usage struct {
			CompletionTokens int `json:"completion_tokens"`
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		panic(err)
	}
	fmt.Println(resp.Status)
	fmt.Println(out.Choices[0].Message.Content)
	fmt.Println(out.Choices[0].FinishReason, out.Usage.CompletionTokens)
	// Output:
	// 200 OK
	// move = [1, 0, 2]
	// next_state = [[3, 2], [], [1]]
	// stop 12
}
