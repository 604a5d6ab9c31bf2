package simserver_test

import (
	"context"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker/sim"
	"github.com/tmc/langchaingo/llms"
)

// BenchmarkChatCompletion is one step request of a 10-disk hanoi task
// through langchaingo's OpenAI client and the loopback server.
func BenchmarkChatCompletion(b *testing.B) {
	_, base := serve(b, hanoiConfig(sim.DefaultConfig()))
	m := client(b, base, 10*time.Second)
	msgs := firstStep(b, 10)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, err := m.GenerateContent(context.Background(), msgs, llms.WithSeed(i+1), llms.WithMaxTokens(750)); err != nil {
			b.Fatal(err)
		}
	}
}
